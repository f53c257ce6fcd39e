"""Finished input iterators are freed on the release thread, not the caller's."""

import gc
import threading
import weakref

import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.engine import input_release as _input_release
from keras_estimator._src.engine.model_fn_model import ModelFnModel
from keras_estimator._src.engine.whole_evaluation import WholeEvaluation
from tests._models import make_data, mlp_model_fn

RELEASE_THREAD = "keras_estimator.input_release"


class _SlowToFree:
    """Records the thread that frees it; waits for `go` first (at most 10 s)."""

    def __init__(self, go, record):
        self._go = go
        self._record = record

    def __del__(self):
        waited = self._go.wait(10)
        self._record.append((threading.current_thread().name, waited))


def test_release_frees_on_its_thread_without_the_caller_waiting():
    go = threading.Event()
    record = []
    box = [_SlowToFree(go, record)]
    _input_release.release(box)
    # Freed in this thread, the object would wait 10 s for `go` and record
    # that it was not set; on the release thread it waits for this line.
    go.set()
    assert _input_release.wait_until_released(30)
    assert record == [(RELEASE_THREAD, True)]
    assert box == []


def test_release_of_an_empty_box_starts_nothing():
    box = []
    _input_release.release(box)
    assert box == []
    assert _input_release.wait_until_released(30)


def _watch_input_iterators(monkeypatch):
    """Records, for each input iterator the model reads, the thread freeing it."""
    freed_in = []
    # By identity while alive: a later iterator may reuse a freed one's id().
    watched = weakref.WeakSet()
    hold = ModelFnModel.hold_input

    def watching_hold(self, iterator):
        if iterator not in watched:
            watched.add(iterator)
            weakref.finalize(
                iterator, lambda: freed_in.append(threading.current_thread().name)
            )
        hold(self, iterator)

    monkeypatch.setattr(ModelFnModel, "hold_input", watching_hold)
    # An evaluation no hook watches reads its iterator in one call instead.
    run = WholeEvaluation.run

    def watching_run(self, iterator, *args):
        if iterator not in watched:
            watched.add(iterator)
            weakref.finalize(
                iterator, lambda: freed_in.append(threading.current_thread().name)
            )
        return run(self, iterator, *args)

    monkeypatch.setattr(WholeEvaluation, "run", watching_run)
    return freed_in


def _live_iterators():
    # Eager iterators only: a traced function that makes iterators (a small
    # input's, `inputs.make_iterator`) keeps its trace's symbolic one.
    return sum(
        1
        for o in gc.get_objects()
        if type(o).__name__ == "OwnedIterator"
        and not tf.is_symbolic_tensor(o._iterator_resource)
    )


def test_train_evaluate_predict_free_their_iterators_on_the_release_thread(
    tmp_path, monkeypatch
):
    """Keras keeps the tf.data iterator in a reference cycle; the loop breaks
    it (no garbage collection needed) and frees the iterator off the caller's
    thread, where its destruction may wait for tf.data's autotuning thread."""
    freed_in = _watch_input_iterators(monkeypatch)
    x, y = make_data(32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(8).repeat()

    def predict_input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": x}).batch(8)

    estimator = ke.Estimator(mlp_model_fn, str(tmp_path), params={"hidden": [4]})
    gc.collect()
    before = _live_iterators()
    gc.disable()  # no collection may happen behind the test's back
    try:
        estimator.train(input_fn, steps=3)
        estimator.evaluate(input_fn, steps=2)
        estimator.evaluate(input_fn, steps=2)
        predictions = estimator.predict(predict_input_fn)
        next(predictions)
        predictions.close()
        assert _input_release.wait_until_released(30)
        assert _live_iterators() == before
    finally:
        gc.enable()
    # One iterator per call (train, two evaluations; predict's is its
    # generator's), and any a call makes again (an evaluation that falls back
    # to the default executor reads a new one): each freed on the release thread.
    assert len(freed_in) >= 3
    assert set(freed_in) == {RELEASE_THREAD}


def test_plain_keras_fit_frees_its_iterator_too(tmp_path, monkeypatch):
    freed_in = _watch_input_iterators(monkeypatch)
    x, y = make_data(32)
    estimator = ke.Estimator(mlp_model_fn, str(tmp_path), params={"hidden": [4]})
    estimator.train(
        lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(8), steps=1
    )
    model = estimator._model
    dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(8)
    gc.disable()
    try:
        model.fit(dataset, epochs=2, verbose=0)
        assert _input_release.wait_until_released(30)
    finally:
        gc.enable()
    # The Estimator's train call and the two-epoch fit.
    assert freed_in and set(freed_in) == {RELEASE_THREAD}
