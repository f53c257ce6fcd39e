"""Hooks a model_fn makes are new objects on every call, as in tf.estimator 2.15.

2.15 called the model_fn on each `train()`, `evaluate()` and `predict()`, so
the hooks its EstimatorSpec returned started each call from their
`__init__`. Reusing the previous call's trace would run the previous call's
hook objects, with whatever they counted. The figures below are 2.15's, from
the same programs run in the reference venv (tensorflow-estimator 2.15.0).
"""

import logging
import shutil

import numpy as np
import tensorflow as tf

import keras_estimator as ke
from keras_estimator.compat.estimator.experimental import KMeans


class _CountingHook(ke.SessionRunHook):
    """Counts its runs from construction; stops training at `stop_at` runs."""

    def __init__(self, made, stop_at=None):
        self.runs = 0
        self._stop_at = stop_at
        made.append(self)

    def after_run(self, run_context, run_values):
        self.runs += 1
        if self._stop_at is not None and self.runs >= self._stop_at:
            run_context.request_stop()


def _input_fn(repeat):
    def fn():
        data = tf.data.Dataset.from_tensor_slices(
            ({"x": np.ones((8, 1), np.float32)}, np.ones((8, 1), np.float32))
        )
        return (data.repeat() if repeat else data).batch(2)

    return fn


def _linear_model_fn(calls, made):
    def model_fn(features, labels, mode):
        calls.append(mode)
        w = tf.compat.v1.get_variable("w", [1, 1])
        prediction = tf.matmul(features["x"], w)
        if mode == ke.ModeKeys.PREDICT:
            return ke.EstimatorSpec(
                mode,
                predictions={"p": prediction[:, 0]},
                prediction_hooks=[_CountingHook(made)],
            )
        loss = tf.reduce_mean(tf.square(prediction - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        if mode == ke.ModeKeys.TRAIN:
            hooks = {"training_hooks": [_CountingHook(made, stop_at=3)]}
        else:
            hooks = {"evaluation_hooks": [_CountingHook(made)]}
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, **hooks)

    return model_fn


def test_a_training_hook_that_stops_after_three_runs_stops_each_call_after_three(tmp_path):
    # 2.15: global step 3 after the first train(), 6 after the second; the
    # model_fn called once per call. A reused hook had counted 3 already and
    # stopped the second call after one step (global step 4).
    calls, made = [], []
    est = ke.Estimator(_linear_model_fn(calls, made), model_dir=str(tmp_path))
    est.train(_input_fn(repeat=True), steps=10)
    assert est.get_variable_value("global_step") == 3
    est.train(_input_fn(repeat=True), steps=10)
    assert est.get_variable_value("global_step") == 6
    assert calls == ["train", "train"]
    assert [hook.runs for hook in made] == [3, 3]


def test_evaluation_and_prediction_hooks_count_their_own_call(tmp_path):
    # 2.15: evaluate() over 4 batches, then evaluate(steps=3), then two
    # predict() calls of 8 examples in 4 batches: each call's hook counted
    # its own runs, [4, 3, 4, 4] (before: 4, 7 and 4, 8 on two reused hooks).
    calls, made = [], []
    est = ke.Estimator(_linear_model_fn(calls, made), model_dir=str(tmp_path))
    est.train(_input_fn(repeat=True), steps=2)
    est.evaluate(_input_fn(repeat=False))
    est.evaluate(_input_fn(repeat=False), steps=3)

    def features_only():
        return _input_fn(repeat=False)().map(lambda features, labels: features)

    assert len(list(est.predict(features_only))) == 8
    assert len(list(est.predict(features_only))) == 8
    assert calls == ["train", "eval", "eval", "infer", "infer"]
    assert [hook.runs for hook in made[1:]] == [4, 3, 4, 4]


def test_kmeans_relative_tolerance_starts_afresh_on_each_train_call(tmp_path):
    # The canned KMeans stops once the loss changes less than the relative
    # tolerance, against the loss its hook saw last. 2.15 made that hook per
    # call: global steps 3, 5, 7 over three train() calls (a reused hook
    # compared the new call's first loss with the last call's: 3, 4, 5).
    points = np.array([[0, 0], [0, 1], [5, 5], [5, 6], [10, 0], [10, 1]], np.float32)
    kmeans = KMeans(
        num_clusters=3,
        relative_tolerance=1e-4,
        model_dir=str(tmp_path),
        initial_clusters=KMeans.KMEANS_PLUS_PLUS_INIT,
        seed=1,
        use_mini_batch=False,
    )
    steps = []
    for _ in range(3):
        kmeans.train(lambda: tf.data.Dataset.from_tensors(points).repeat(), steps=50)
        steps.append(int(kmeans.get_variable_value("global_step")))
    assert steps == [3, 5, 7]


def _logged_lines(caplog):
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("w = ")]


def test_a_logging_hook_reused_with_the_trace_logs_what_a_new_one_logs(tmp_path, caplog):
    """The stock LoggingTensorHook resets in begin(): the trace is kept.

    Its second call logs the lines a new Estimator on a copy of the same
    model_dir logs, which calls the model_fn afresh as 2.15 did.
    """
    calls = []

    def model_fn(features, labels, mode):
        calls.append(mode)
        w = tf.compat.v1.get_variable("w", [1, 1])
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        hook = ke.LoggingTensorHook({"w": tf.identity(w)}, every_n_iter=2)
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[hook])

    first_dir, copy_dir = tmp_path / "a", tmp_path / "b"
    est = ke.Estimator(model_fn, model_dir=str(first_dir))
    est.train(_input_fn(repeat=True), steps=3)
    shutil.copytree(first_dir, copy_dir)
    caplog.set_level(logging.INFO, logger="keras_estimator")
    caplog.clear()
    est.train(_input_fn(repeat=True), steps=5)
    reused = _logged_lines(caplog)
    caplog.clear()
    ke.Estimator(model_fn, model_dir=str(copy_dir)).train(_input_fn(repeat=True), steps=5)
    fresh = _logged_lines(caplog)
    assert len(reused) == 3  # steps 4, 6 and 8
    assert [line.split(" (")[0] for line in reused] == [line.split(" (")[0] for line in fresh]
    assert calls == ["train", "train"]  # the kept trace, then the new Estimator's
