"""Calls of one Estimator from several threads give what each gives alone.

tf.estimator 2.15 gave every call a graph and session of its own, so two
threads evaluating, or training and evaluating, one Estimator did not see
each other. Here the calls share the Estimator's variables and metrics, so
one waits for the other (`call_lock`); the results must be those of the
calls made one after the other. Each test holds the first call mid-way
until the second has either finished (it ran alongside: the failure) or
logged that it waits.
"""

import threading
import time

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

_X = np.random.RandomState(0).rand(40, 3).astype(np.float32)
_Y = (_X.sum(axis=1, keepdims=True) > 1.5).astype(np.float32)


def _model_fn(features, labels, mode):
    logits = ke.compat.layers.dense(features["x"], 1, name="out")
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    metrics = {
        "accuracy": tf.compat.v1.metrics.accuracy(labels, tf.cast(logits > 0, tf.float32)),
        "mean_logit": tf.compat.v1.metrics.mean(logits),
    }
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def _train_input():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat().batch(4)


def _eval_input():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).batch(4)


def _estimator(model_dir):
    return ke.Estimator(_model_fn, model_dir=str(model_dir), config=ke.RunConfig(tf_random_seed=3))


class _PauseAt(ke.SessionRunHook):
    """Holds its call after `step` runs until `resume` is set."""

    def __init__(self, step, paused, resume):
        self._step, self._paused, self._resume, self._runs = step, paused, resume, 0

    def after_run(self, run_context, run_values):
        self._runs += 1
        if self._runs == self._step:
            self._paused.set()
            assert self._resume.wait(60)


def _wait_for(condition):
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _run_beside(first, second, caplog, waits_for):
    """Runs `first(hook)` in a thread, paused mid-way while `second()` starts."""
    paused, resume = threading.Event(), threading.Event()
    results = {}
    caplog.set_level("WARNING", logger="keras_estimator")

    def run(key, call):
        results[key] = call()

    one = threading.Thread(target=run, args=("first", lambda: first(_PauseAt(3, paused, resume))))
    two = threading.Thread(target=run, args=("second", second))
    one.start()
    try:
        assert paused.wait(60)
        two.start()
        _wait_for(
            lambda: "second" in results
            or any(waits_for in r.getMessage() for r in caplog.records)
        )
    finally:
        resume.set()
        one.join(60)
        if two.is_alive() or two.ident is not None:
            two.join(60)
    assert not one.is_alive() and not two.is_alive()
    return results["first"], results["second"]


def test_two_evaluations_at_once_give_what_each_gives_alone(tmp_path, caplog):
    est = _estimator(tmp_path)
    est.train(_train_input, steps=5)
    alone = est.evaluate(_eval_input)
    first, second = _run_beside(
        lambda hook: est.evaluate(_eval_input, hooks=[hook]),
        lambda: est.evaluate(_eval_input),
        caplog,
        "evaluate() waits for the evaluate()",
    )
    for result in (first, second):
        assert result == pytest.approx(alone)


def test_an_evaluation_while_another_thread_trains_leaves_training_alone(tmp_path, caplog):
    reference = _estimator(tmp_path / "alone")
    reference.train(_train_input, steps=2)
    reference.train(_train_input, steps=8)

    est = _estimator(tmp_path / "shared")
    est.train(_train_input, steps=2)
    _, evaluated = _run_beside(
        lambda hook: est.train(_train_input, steps=8, hooks=[hook]),
        lambda: est.evaluate(_eval_input),
        caplog,
        "evaluate() waits for the train()",
    )
    assert est.get_variable_value("global_step") == 10
    for name in ("out/kernel", "out/bias"):
        np.testing.assert_array_equal(
            est.get_variable_value(name), reference.get_variable_value(name)
        )
    # The evaluation ran after the training, on its last checkpoint.
    assert evaluated["global_step"] == 10
    assert evaluated == pytest.approx(reference.evaluate(_eval_input))


def test_training_in_a_thread_of_its_own_trains_as_in_the_main_thread(tmp_path):
    # The input_fn's seeds are set from another thread than the first.
    in_main = _estimator(tmp_path / "main")
    in_main.train(_train_input, steps=6)
    in_thread = _estimator(tmp_path / "thread")
    worker = threading.Thread(target=lambda: in_thread.train(_train_input, steps=6))
    worker.start()
    worker.join(120)
    assert not worker.is_alive()
    for name in ("out/kernel", "out/bias", "global_step"):
        np.testing.assert_array_equal(
            in_thread.get_variable_value(name), in_main.get_variable_value(name)
        )


def _shuffled_input():
    return _train_input().unbatch().shuffle(40).batch(4)


def test_two_estimators_making_their_input_in_two_threads_at_once(tmp_path):
    # The input_fn runs with the process's eager seed set from tf_random_seed;
    # the second thread's input_fn starting inside the first's (and ending
    # after it) used to leave it with the first's seed state, then fail.
    alone = {}
    for key in ("a", "b"):
        est = _estimator(tmp_path / f"alone_{key}")
        est.train(_shuffled_input, steps=6)
        alone[key] = est.get_variable_value("out/kernel")

    a_started, a_made, b_started = threading.Event(), threading.Event(), threading.Event()

    def input_a():
        a_started.set()
        dataset = _shuffled_input()
        b_started.wait(1)  # b's input_fn starts now where it can
        a_made.set()
        return dataset

    def input_b():
        b_started.set()
        dataset = _shuffled_input()
        assert a_made.wait(60)
        return dataset

    estimators = {key: _estimator(tmp_path / key) for key in ("a", "b")}
    errors = []

    def train(key, input_fn):
        try:
            estimators[key].train(input_fn, steps=6)
        except Exception as error:  # reported below, with its thread's key
            errors.append((key, error))

    threads = [
        threading.Thread(target=train, args=("a", input_a)),
        threading.Thread(target=train, args=("b", input_b)),
    ]
    threads[0].start()
    assert a_started.wait(60)
    threads[1].start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    for key, est in estimators.items():
        np.testing.assert_array_equal(est.get_variable_value("out/kernel"), alone[key])
