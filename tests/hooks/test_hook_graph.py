"""What a SessionRunHook's graph lookups return in each of its methods.

tf.estimator 2.15's answers are recorded in
`tests/fixtures/tf215_hook_lookups/lookups.json` by
`tests/fixtures/make_tf215_hook_lookups_fixture.py`, whose `LookupHook` and
model_fn run here unchanged on keras_estimator.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.engine.hook_callback import HookCallback
from tests.fixtures import make_tf215_hook_lookups_fixture as fixture

_REFERENCE = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "tf215_hook_lookups" / "lookups.json").read_text()
)
_METHODS = ("begin", "after_create_session", "before_run", "after_run", "end")
# Collections whose contents are 2.15's exactly (LOSSES in training holds the
# EstimatorSpec's loss, as 2.15 added it). 2.15's LOCAL_VARIABLES in evaluation
# held its own eval_step and loss-mean variables, objects of 2.15's evaluation
# graph, not the model_fn's.
_SAME_COLLECTIONS = ("global_step", "trainable_variables", "variables", "update_ops", "losses")


def _comparable(observation):
    kept = dict(observation)
    kept["collections"] = {key: observation["collections"][key] for key in _SAME_COLLECTIONS}
    return kept


@pytest.fixture(scope="module")
def estimator_runs(tmp_path_factory):
    model_dir = tmp_path_factory.mktemp("hook_graph")
    estimator = ke.Estimator(fixture.make_model_fn(ke.EstimatorSpec), model_dir=str(model_dir))
    train_hook, eval_hook = fixture.LookupHook(), fixture.LookupHook()
    estimator.train(fixture.input_fn, steps=4, hooks=[train_hook])
    estimator.evaluate(fixture.input_fn, steps=3, hooks=[eval_hook])
    return {"train": train_hook, "evaluate": eval_hook}


@pytest.mark.parametrize("method", _METHODS)
@pytest.mark.parametrize("call", ["train", "evaluate"])
def test_hook_lookups_match_tf215_in_every_method(estimator_runs, call, method):
    seen = estimator_runs[call].seen[method]
    assert seen["get_global_step"] == "global_step:0"
    assert _comparable(seen) == _comparable(_REFERENCE[call][method])


def test_global_step_fetched_from_before_run_is_tf215s(estimator_runs):
    # 2.15: [0, 1, 2, 3] in train (the step each run ran at), [4, 4, 4] in evaluate.
    assert estimator_runs["train"].results == _REFERENCE["train_results"] == [0, 1, 2, 3]
    assert estimator_runs["evaluate"].results == _REFERENCE["eval_results"] == [4, 4, 4]


def test_hooks_in_model_fit_see_the_training_graph(tmp_path):
    model = ke.model_fn_to_keras(fixture.make_model_fn(ke.EstimatorSpec), str(tmp_path))
    hook = fixture.LookupHook()
    x, y = fixture.data()
    data = tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(8)
    model.fit(data, steps_per_epoch=4, callbacks=[HookCallback([hook])], verbose=0)
    assert hook.results == [0, 1, 2, 3]
    for method in _METHODS:
        assert _comparable(hook.seen[method]) == _comparable(_REFERENCE["train"][method])


class _EagerAfterRunHook(ke.SessionRunHook):
    """Reads the step variable eagerly after each run, as keras_estimator allows."""

    def __init__(self):
        self.steps = []

    def after_run(self, run_context, run_values):
        step = tf.compat.v1.train.get_global_step()
        self.steps.append(int(step.numpy()))
        assert tf.executing_eagerly()
        # Not taken for traced code: tf.saved_model.save (an exporter run
        # from a hook) refuses to run inside a function.
        assert not tf.inside_function()


def test_hooks_still_run_eagerly_after_begin(tmp_path):
    hook = _EagerAfterRunHook()
    estimator = ke.Estimator(fixture.make_model_fn(ke.EstimatorSpec), model_dir=str(tmp_path))
    estimator.train(fixture.input_fn, steps=3, hooks=[hook])
    assert hook.steps == [1, 2, 3]
    # The lookups end with the hook call: the default graph is TensorFlow's again.
    assert tf.compat.v1.train.get_global_step() is None
    np.testing.assert_equal(tf.executing_eagerly(), True)


class _StepFetchHook(ke.SessionRunHook):
    """tf.estimator's idiom: fetch get_global_step() from before_run."""

    def __init__(self):
        self.results = []

    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs(tf.compat.v1.train.get_global_step())

    def after_run(self, run_context, run_values):
        self.results.append(run_values.results)


def test_bare_global_step_fetch_is_not_none(tmp_path):
    # Was None at every step, with no error.
    hook = _StepFetchHook()
    estimator = ke.Estimator(fixture.make_model_fn(ke.EstimatorSpec), model_dir=str(tmp_path))
    estimator.train(fixture.input_fn, steps=3, hooks=[hook])
    assert [int(step) for step in hook.results] == [0, 1, 2]
