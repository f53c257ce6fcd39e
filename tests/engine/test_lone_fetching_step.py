"""A training call's lone first step runs through the compiled run that ends with it.

Each `train()` starts with a step the default hooks fetch from on its own
(the logging hook's first line); the runs after it fuse their steps with
such a fetching step. From the second call on, that first step runs
through the run's compiled function with no step ahead rather than being
compiled alone, which cost a trace of its own. It must give what the lone
step gave: the same element, weights and fetched values, bit for bit, and
an input that has ended is still the end of training.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator
from keras_estimator._src.engine import step_functions
from keras_estimator.compat import layers

v1 = tf.compat.v1

_X = np.linspace(-1.0, 1.0, 40, dtype=np.float32).reshape(20, 2)
_Y = (_X @ np.array([[1.5], [-2.0]], np.float32) + 0.5).astype(np.float32)


def _model_fn(features, labels, mode):
    net = layers.dense(features["x"], 4, activation=tf.nn.tanh, name="hidden")
    predictions = layers.dense(net, 1, name="out")
    loss = v1.losses.mean_squared_error(labels, predictions)
    v1.summary.scalar("loss_again", loss)
    train_op = v1.train.AdamOptimizer(0.05).minimize(loss, global_step=v1.train.get_global_step())
    return keras_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


class _Logged:
    """What a LoggingTensorHook logged: the loss at the first step of each call
    and every `every` steps after it, as the default logging hook fetches."""

    def __init__(self):
        self.values = []

    def hook(self, every):
        return keras_estimator.LoggingTensorHook(
            {"loss": "mean_squared_error/value:0"},
            every_n_iter=every,
            formatter=lambda values: self.values.append(float(values["loss"])) or "",
        )


def _lone_steps(est):
    # Private: the Estimator's cached fetching steps of one element.
    return [
        function
        for holder in vars(est._model).values()
        if hasattr(holder, "_fetching_functions")
        for function in holder._fetching_functions.values()
        if isinstance(function, step_functions._EagerFirst)
    ]


def _train(tmp_path, monkeypatch, through_run, input_fns, every=None, hooked=True):
    served = []
    if through_run:
        real = step_functions.StepFunctions._fetch_in_run_function

        def counted(*args):
            result = real(*args)
            served.append(result is not None)
            return result

        monkeypatch.setattr(step_functions.StepFunctions, "_fetch_in_run_function", counted)
    else:
        monkeypatch.setattr(
            step_functions.StepFunctions, "_fetch_in_run_function", lambda *args: None
        )
    config = keras_estimator.RunConfig(
        tf_random_seed=2, save_summary_steps=every or 100, log_step_count_steps=every or 100
    )
    est = keras_estimator.Estimator(_model_fn, str(tmp_path / f"model_{through_run}"), config=config)
    logged = _Logged()
    for input_fn, steps in input_fns:
        hooks = [logged.hook(every or 100)] if hooked else []
        est.train(input_fn, steps=steps, hooks=hooks)
    weights = {name: est.get_variable_value(name) for name in est.get_variable_names()}
    monkeypatch.undo()
    return est, weights, logged.values, sum(served)


def _repeated():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).shuffle(20, seed=4).repeat().batch(3)


def _finite(batches):
    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat(20).batch(3)
        return data.take(batches)

    return input_fn


def _assert_same(through_run, lone, logged):
    assert through_run[2] == lone[2]
    assert len(through_run[2]) == logged
    assert through_run[1].keys() == lone[1].keys()
    for name, value in through_run[1].items():
        np.testing.assert_array_equal(value, lone[1][name], err_msg=name)


@pytest.mark.parametrize("every", [5, 7])
@pytest.mark.parametrize(
    "calls",
    [
        [(_repeated, 12, 12), (_repeated, 9, 9), (_repeated, 1, 1), (_repeated, 6, 6)],
        # Inputs that end: the second call's input ends after 5 of its 20
        # steps, and the third call's has no element at all.
        [(_finite(30), 12, 12), (_finite(5), 20, 5), (_finite(0), 4, 0), (_finite(30), 3, 3)],
    ],
    ids=["endless", "ending"],
)
def test_later_calls_first_steps_train_as_the_lone_step_did(tmp_path, monkeypatch, calls, every):
    input_fns = [(input_fn, steps) for input_fn, steps, _ in calls]
    lone = _train(tmp_path, monkeypatch, False, input_fns, every)
    through_run = _train(tmp_path, monkeypatch, True, input_fns, every)
    _assert_same(through_run, lone, sum(-(-ran // every) for _, _, ran in calls))
    assert through_run[3] > 0  # later calls' first steps ran through the run's function
    np.testing.assert_array_equal(through_run[1]["global_step"], sum(r for _, _, r in calls))


def test_a_later_call_compiles_no_lone_step(tmp_path, monkeypatch):
    # Default RunConfig and hooks: the first step of each call fetches what
    # every hundredth step does (the loss, the summaries), whose runs are
    # compiled with the steps ahead of it.
    calls = [(_repeated, 250), (_repeated, 120), (_repeated, 30)]
    lone = _train(tmp_path, monkeypatch, False, calls, hooked=False)
    through_run = _train(tmp_path, monkeypatch, True, calls, hooked=False)
    _assert_same(through_run, lone, 0)
    # Only the first call ran its first step alone (eagerly, as at a cold
    # start); the lone step was compiled for the second call before.
    assert [step.compiles_next for step in _lone_steps(through_run[0])] == [True]
    assert [step.compiles_next for step in _lone_steps(lone[0])] == [False]
