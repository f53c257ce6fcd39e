"""Each stock Keras callback in `Model.fit` and in `model_to_estimator(model).train`.

The same model (same seed), the same batches, the same callback: what the
callback leaves behind (files reloaded, learning rates per step, logs, call
counts, printed bars, event files) must be what `fit` leaves. Then the same
callbacks on a model_fn Estimator, whose callback model is a view of its
variables (`ModelFnView`).
"""

import csv
import re

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import keras_estimator as ke
from tests.callbacks import _harness as h

STEPS = 4


class Calls(keras.callbacks.Callback):
    """Records every callback call: method, batch/epoch index, learning rate."""

    def __init__(self):
        super().__init__()
        self.calls = []
        self.rates = []

    def _add(self, name, *index):
        self.calls.append((name, *index))

    def on_train_begin(self, logs=None):
        self._add("on_train_begin")

    def on_train_end(self, logs=None):
        self._add("on_train_end")

    def on_epoch_begin(self, epoch, logs=None):
        self._add("on_epoch_begin", epoch)

    def on_epoch_end(self, epoch, logs=None):
        self._add("on_epoch_end", epoch)

    def on_train_batch_begin(self, batch, logs=None):
        self._add("on_train_batch_begin", batch)

    def on_train_batch_end(self, batch, logs=None):
        self._add("on_train_batch_end", batch)
        rate = self.model.optimizer.learning_rate
        self.rates.append(float(keras.ops.convert_to_numpy(rate)))


def _both(make_callbacks, steps=STEPS, optimizer=None, verbose=0):
    """Runs fit and the Estimator; returns (fit's, ours): callbacks, model, estimator."""
    fitted = h.build_model(optimizer=optimizer)
    fit_callbacks = make_callbacks("fit")
    fitted.fit(
        h.dataset(), steps_per_epoch=steps, epochs=1, verbose=verbose, shuffle=False,
        callbacks=fit_callbacks,
    )
    model = h.build_model(optimizer=optimizer)
    ours = make_callbacks("estimator")
    estimator = h.estimator_run(model, steps, ours)
    return (fit_callbacks, fitted), (ours, estimator)


@given(
    factor=st.sampled_from([0.5, 0.1, 2.0]),
    steps=st.integers(1, 5),
)
def test_learning_rate_scheduler_sets_the_rate_fit_sets(factor, steps):
    def make(_):
        return [keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * factor), Calls()]

    (theirs, fitted), (ours, estimator) = _both(make, steps=steps)
    assert ours[1].rates == theirs[1].rates == [pytest.approx(0.1 * factor)] * steps
    assert ours[1].calls == theirs[1].calls
    h.assert_same_arrays(h.estimator_weights(estimator), fitted.get_weights())


def test_reduce_lr_on_plateau_runs_to_the_final_checkpoint(tmp_path):
    def make(_):
        return [keras.callbacks.ReduceLROnPlateau(monitor="loss", patience=0), Calls()]

    (theirs, fitted), (ours, estimator) = _both(make)
    assert ours[1].rates == theirs[1].rates
    assert estimator.latest_checkpoint().endswith(f"model.ckpt-{STEPS}")
    h.assert_same_arrays(h.estimator_weights(estimator), fitted.get_weights())


def test_swap_ema_weights_on_epoch_as_fit():
    def make(_):
        return [keras.callbacks.SwapEMAWeights(swap_on_epoch=True)]

    def ema():
        return keras.optimizers.SGD(0.3, use_ema=True, ema_momentum=0.5)

    (_, fitted), (_, estimator) = _both(make, optimizer=ema)
    h.assert_same_arrays(h.estimator_weights(estimator), fitted.get_weights())


def test_model_checkpoint_saves_the_keras_model(tmp_path):
    def make(kind):
        path = str(tmp_path / f"{kind}.keras")
        return [keras.callbacks.ModelCheckpoint(path, save_freq=2)]

    _both(make)
    loaded = {kind: keras.models.load_model(str(tmp_path / f"{kind}.keras")) for kind in ("fit", "estimator")}
    h.assert_same_arrays(loaded["estimator"].get_weights(), loaded["fit"].get_weights())
    x = h.X[:5]
    np.testing.assert_array_equal(loaded["estimator"].predict(x, verbose=0), loaded["fit"].predict(x, verbose=0))


def test_csv_logger_history_and_call_counts_as_fit(tmp_path):
    def make(kind):
        return [
            keras.callbacks.CSVLogger(str(tmp_path / f"{kind}.csv")),
            keras.callbacks.History(),
            Calls(),
        ]

    (theirs, _), (ours, _) = _both(make)
    with open(tmp_path / "fit.csv") as a, open(tmp_path / "estimator.csv") as b:
        assert list(csv.reader(b)) == list(csv.reader(a))
    assert ours[1].history == theirs[1].history
    assert ours[2].calls == theirs[2].calls


def test_progbar_logger_prints_fits_bar():
    fitted = h.build_model()
    theirs = h.printed(lambda: fitted.fit(h.dataset(), steps_per_epoch=STEPS, epochs=1, shuffle=False,
                                          callbacks=[keras.callbacks.ProgbarLogger()]))
    ours = h.printed(lambda: h.estimator_run(h.build_model(), STEPS, [keras.callbacks.ProgbarLogger()]))
    assert f"{STEPS}/{STEPS}" in ours
    assert ours.splitlines()[-1].rstrip() == theirs.splitlines()[-1].rstrip()


def _unnumbered(value):
    """The model's config without Keras' auto-numbered names (functional_3, sgd_3)."""
    if value.dtype == object:
        return re.sub(rb"_\d+\"", b'"', value.item())
    return value


def test_tensorboard_writes_fits_tags_histograms_and_graph(tmp_path):
    def make(kind):
        return [keras.callbacks.TensorBoard(str(tmp_path / kind), histogram_freq=1, write_graph=True)]

    _both(make)
    loaded = {}
    for kind in ("fit", "estimator"):
        events = EventAccumulator(str(tmp_path / kind / "train"), size_guidance={"tensors": 0})
        events.Reload()
        loaded[kind] = events
    tags = {kind: events.Tags() for kind, events in loaded.items()}
    assert sorted(tags["estimator"]["tensors"]) == sorted(tags["fit"]["tensors"])
    # write_graph writes the model's config as the "keras" tag in Keras 3.
    assert {"keras", "epoch_loss", "epoch_learning_rate", "hidden/kernel/histogram"} <= set(
        tags["fit"]["tensors"]
    )
    for tag in tags["fit"]["tensors"]:
        mine = [_unnumbered(tf.make_ndarray(e.tensor_proto)) for e in loaded["estimator"].Tensors(tag)]
        theirs = [_unnumbered(tf.make_ndarray(e.tensor_proto)) for e in loaded["fit"].Tensors(tag)]
        h.assert_same_arrays(mine, theirs)
    assert tags["estimator"]["graph"] == tags["fit"]["graph"]


def test_early_stopping_as_fit(tmp_path):
    def make(_):
        return [keras.callbacks.EarlyStopping(monitor="loss", patience=0, restore_best_weights=True), Calls()]

    (theirs, fitted), (ours, estimator) = _both(make)
    assert ours[1].calls == theirs[1].calls
    h.assert_same_arrays(h.estimator_weights(estimator), fitted.get_weights())


def test_terminate_on_nan_stops_gracefully_at_fits_step():
    def make(_):
        return [keras.callbacks.TerminateOnNaN(), Calls()]

    def diverging():
        return keras.optimizers.SGD(1e25)

    (theirs, _), (ours, estimator) = _both(make, steps=8, optimizer=diverging)
    assert ours[1].calls == theirs[1].calls
    assert ("on_train_batch_end", 1) in ours[1].calls
    assert ("on_train_batch_begin", 2) not in ours[1].calls
    # Stopped, not raised: the final checkpoint is at the step it stopped.
    assert estimator.latest_checkpoint().endswith("model.ckpt-2")


def test_without_terminate_on_nan_a_nan_loss_still_raises():
    with pytest.raises(ke.NanLossDuringTrainingError):
        h.estimator_run(h.build_model(optimizer=lambda: keras.optimizers.SGD(1e25)), 8, [])


# ---- model_fn Estimators -----------------------------------------------------------


def _model_fn(rate):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [4, 3], initializer=tf.compat.v1.zeros_initializer())
        logits = tf.matmul(features["x"], w)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        if rate == "keras":
            optimizer = keras.optimizers.SGD(0.1)
            train_op = optimizer.apply_gradients([(tf.gradients(loss, w)[0], w)])
        else:
            if rate == "variable":
                value = tf.compat.v1.get_variable("learning_rate", initializer=0.1, trainable=False)
            else:
                value = rate
            optimizer = tf.compat.v1.train.GradientDescentOptimizer(value)
            train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


@pytest.mark.parametrize("rate", ["variable", "keras"])
def test_model_fn_schedulers_set_the_rate_the_steps_use(rate, tmp_path):
    calls = Calls()
    scheduled = ke.Estimator(_model_fn(rate), model_dir=str(tmp_path / "scheduled"))
    scheduler = keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5)
    plateau = keras.callbacks.ReduceLROnPlateau(monitor="loss", patience=0)
    scheduled.train(h.dataset, steps=3, callbacks=[scheduler, calls, plateau])
    assert calls.rates == [pytest.approx(0.05)] * 3
    constant = ke.Estimator(_model_fn(0.05), model_dir=str(tmp_path / "constant"))
    constant.train(h.dataset, steps=3)
    np.testing.assert_allclose(scheduled.get_variable_value("w"), constant.get_variable_value("w"), rtol=1e-6)


@pytest.mark.parametrize(
    "callback, pattern",
    [
        (lambda p: keras.callbacks.LearningRateScheduler(lambda e, lr: lr), r"learning_rate=0\.1, a Python number.*get_variable"),
        (lambda p: keras.callbacks.ReduceLROnPlateau(monitor="loss"), r"ReduceLROnPlateau: .*Python number"),
        (lambda p: keras.callbacks.ModelCheckpoint(str(p / "m.keras")), r"save_weights_only=False.*save_weights_only=True"),
        (lambda p: keras.callbacks.SwapEMAWeights(), r"SwapEMAWeights .*model_to_estimator"),
    ],
)
def test_model_fn_refuses_at_train_start_what_it_cannot_serve(callback, pattern, tmp_path):
    estimator = ke.Estimator(_model_fn(0.1), model_dir=str(tmp_path / "model"))
    with pytest.raises(ValueError, match=pattern):
        estimator.train(h.dataset, steps=3, callbacks=[callback(tmp_path)])
    # Refused before any step or file: no checkpoint, no stray model file.
    assert estimator.latest_checkpoint() is None
    assert not (tmp_path / "m.keras").exists()


def test_model_fn_history_csv_and_calls_as_an_equivalent_keras_model(tmp_path):
    calls, history = Calls(), keras.callbacks.History()
    estimator = ke.Estimator(_model_fn("variable"), model_dir=str(tmp_path / "m"))
    estimator.train(h.dataset, steps=STEPS, callbacks=[calls, history, keras.callbacks.CSVLogger(str(tmp_path / "log.csv"))])
    keras_calls = Calls()
    h.fit_run(h.build_model(), STEPS, [keras_calls])
    assert calls.calls == keras_calls.calls
    assert sorted(history.history) == ["loss"]
    with open(tmp_path / "log.csv") as file:
        rows = list(csv.reader(file))
    # CSVLogger adds val_ columns when logs have none, in fit too.
    assert rows[0] == ["epoch", "loss", "val_loss"] and len(rows) == 2


def test_swap_ema_weights_in_evaluate_as_keras_evaluate(tmp_path):
    def ema():
        return keras.optimizers.SGD(0.3, use_ema=True, ema_momentum=0.5)

    fitted = h.build_model(optimizer=ema)
    h.fit_run(fitted, STEPS, [])
    estimator = h.estimator_run(h.build_model(optimizer=ema), STEPS, [], model_dir=str(tmp_path))

    def data():
        return tf.data.Dataset.from_tensor_slices(({"x": h.X}, h.Y)).batch(h.BATCH)

    keras_results = fitted.evaluate(data(), callbacks=[keras.callbacks.SwapEMAWeights()], return_dict=True, verbose=0)
    ours = estimator.evaluate(data, callbacks=[keras.callbacks.SwapEMAWeights()])
    # (Both trainings end with the averages in the weights, as fit does, so
    # this checks that the callback runs on the Estimator's model as in Keras'
    # evaluate, and swaps back: the checkpoint's weights are unchanged.)
    assert ours["loss"] == pytest.approx(keras_results["loss"], rel=1e-6)
    assert ours["accuracy"] == pytest.approx(keras_results["accuracy"], rel=1e-6)
    h.assert_same_arrays(h.estimator_weights(estimator), fitted.get_weights())


def test_remote_monitor_posts_what_fit_posts(monkeypatch):
    # RemoteMonitor posts each epoch's logs with `requests.post`; recorded
    # here instead of sent (no network in tests).
    import requests

    posted = []
    monkeypatch.setattr(requests, "post", lambda url, *args, **kwargs: posted.append((url, args, kwargs)))

    def make(_):
        return [keras.callbacks.RemoteMonitor(root="http://127.0.0.1:9000", send_as_json=True)]

    _both(make)
    assert len(posted) == 2
    fit_post, our_post = posted
    assert our_post[0] == fit_post[0] == "http://127.0.0.1:9000/publish/epoch/end/"
    # The same keys (fit's logs, no global_step) and the same values.
    assert our_post[2]["json"] == fit_post[2]["json"]
    assert set(fit_post[2]["json"]) == {"epoch", "loss", "accuracy"}


def test_lambda_callback_gets_fits_calls_and_logs():
    def make(_):
        seen = []

        def record(name):
            def call(*args, logs=None):
                seen.append((name, *args, dict(logs) if logs is not None else None))

            return call

        methods = ["on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end",
                   "on_train_batch_begin", "on_train_batch_end"]
        callback = keras.callbacks.LambdaCallback(**{m: record(m) for m in methods})
        callback.seen = seen
        return [callback]

    (theirs, _), (ours, _) = _both(make)
    # Every call in fit's order, with fit's logs (keys and values).
    assert ours[0].seen == theirs[0].seen
    assert len(ours[0].seen) == 2 + 2 + 2 * STEPS
