"""`RunConfig(steps_per_loop=N)`: TPUEstimator's iterations_per_loop.

Every compiled call runs N steps (fewer only at the last step or the end of
the input); hooks and callbacks run between calls and see each loop's last
step. The steps themselves are the same as step-by-step training.
"""

import tempfile

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator._src.engine import loop as _loop
from tests._models import input_fn, make_data, mlp_model_fn


class LossEveryRun(ke.SessionRunHook):
    """Fetches the loss by graph name at every run; records (step, loss)."""

    def __init__(self):
        self.seen = []

    def before_run(self, run_context):
        return ke.SessionRunArgs({"loss": "the_loss", "step": "global_step"})

    def after_run(self, run_context, run_values):
        results = run_values.results
        self.seen.append((int(results["step"]), float(results["loss"])))


class RunBoundaries(ke.SessionRunHook):
    """Fetches nothing; records the global step after every run."""

    def __init__(self):
        self.steps = []

    def after_run(self, run_context, run_values):
        self.steps.append(run_context.global_step)


def named_loss_model_fn(features, labels, mode, params):
    spec = mlp_model_fn(features, labels, mode, params)
    return spec._replace(loss=tf.identity(spec.loss, name="the_loss"))


def train(steps, steps_per_loop, hooks, data=None, max_steps=None):
    x, y = make_data(num_examples=48)
    data = data or input_fn(x, y, batch_size=8)
    with tempfile.TemporaryDirectory() as model_dir:
        est = ke.Estimator(
            named_loss_model_fn,
            model_dir=model_dir,
            params={"hidden": [5]},
            config=ke.RunConfig(
                tf_random_seed=3,
                steps_per_loop=steps_per_loop,
            ),
        )
        est.train(data, steps=steps, max_steps=max_steps, hooks=hooks)
        weights = {n: est.get_variable_value(n) for n in est.get_variable_names()}
    return weights


def test_hooks_run_at_loop_boundaries_ending_at_the_last_step():
    boundaries = RunBoundaries()
    weights = train(steps=12, steps_per_loop=5, hooks=[boundaries])
    assert boundaries.steps == [5, 10, 12]
    assert int(weights["global_step"]) == 12


def test_a_stop_at_step_hook_ends_the_loop_on_its_step():
    boundaries = RunBoundaries()
    weights = train(
        steps=20, steps_per_loop=5, hooks=[ke.StopAtStepHook(last_step=7), boundaries]
    )
    assert boundaries.steps == [5, 7]
    assert int(weights["global_step"]) == 7


def test_fetching_hook_sees_each_loops_last_step():
    every_step = LossEveryRun()
    train(steps=9, steps_per_loop=None, hooks=[every_step])
    # A fetched global step is the value the step ran at, as in tf.estimator.
    assert [s for s, _ in every_step.seen] == list(range(0, 9))
    per_loop = LossEveryRun()
    train(steps=9, steps_per_loop=4, hooks=[per_loop])
    assert [s for s, _ in per_loop.seen] == [3, 7, 8]
    losses = dict(every_step.seen)
    assert per_loop.seen == [(s, losses[s]) for s in (3, 7, 8)]


def test_input_ending_inside_a_loop_skips_that_loops_fetch():
    x, y = make_data(num_examples=56)
    seven_batches = input_fn(x, y, batch_size=8, repeat=False)
    hook = LossEveryRun()
    weights = train(steps=None, steps_per_loop=5, hooks=[hook], data=seven_batches)
    assert int(weights["global_step"]) == 7
    # The second loop ended at step 7, before the step that fetches.
    assert [s for s, _ in hook.seen] == [4]


def test_evaluation_runs_in_loops_with_the_same_metrics(tmp_path):
    x, y = make_data(num_examples=80)
    results = {}
    for length in (None, 3):
        est = ke.Estimator(
            mlp_model_fn,
            model_dir=str(tmp_path),
            params={"hidden": [5]},
            config=ke.RunConfig(tf_random_seed=3, steps_per_loop=length),
        )
        if length is None:
            est.train(input_fn(x, y, batch_size=8), steps=6)
        boundaries = RunBoundaries()
        results[length] = est.evaluate(
            input_fn(x, y, batch_size=8, repeat=False), hooks=[boundaries]
        )
        if length == 3:
            # 10 batches in loops of 3: four runs.
            assert len(boundaries.steps) == 4
    assert results[None] == results[3]


@given(
    limit=st.tuples(st.sampled_from(["steps", "max_steps"]), st.integers(1, 20)),
    steps_per_loop=st.integers(1, 7),
)
def test_loops_give_the_weights_of_step_by_step_training(limit, steps_per_loop):
    kind, last = limit
    steps, max_steps = (last, None) if kind == "steps" else (None, last)
    boundaries = RunBoundaries()
    looped = train(steps, steps_per_loop, [boundaries], max_steps=max_steps)
    single = train(steps, 1, [], max_steps=max_steps)
    expected = list(range(steps_per_loop, last, steps_per_loop)) + [last]
    assert boundaries.steps == expected
    assert looped.keys() == single.keys()
    for name in looped:
        np.testing.assert_array_equal(looped[name], single[name], name)


class NeedsEveryThird(ke.SessionRunHook):
    def steps_until_needed(self, global_step):
        return 3 - global_step % 3


def test_loop_length_ignores_hook_needs_but_not_the_last_step():
    state = _loop.RunState(0)
    callbacks = [_loop.StopAtStep(state, 25), ke.HookCallback([NeedsEveryThird()])]
    assert _loop.plan_steps(callbacks, 0) == 3
    assert _loop.plan_steps(callbacks, 0, loop_length=10) == 10
    assert _loop.plan_steps(callbacks, 20, loop_length=10) == 5
    assert _loop.plan_steps(callbacks, 25, loop_length=10) == 0
    stop_hook = ke.HookCallback([ke.StopAtStepHook(last_step=13)])
    assert _loop.plan_steps([stop_hook], 10, loop_length=10) == 3


@pytest.mark.parametrize(
    "value, error, match",
    [
        (0, ValueError, r"steps_per_loop should be >= 1, got 0"),
        ("5", TypeError, r"steps_per_loop must be an integer or None, got '5'"),
        (2.5, TypeError, r"steps_per_loop must be an integer or None, got 2.5"),
    ],
)
def test_bad_steps_per_loop_is_refused(value, error, match):
    with pytest.raises(error, match=match):
        ke.RunConfig(steps_per_loop=value)
    with pytest.raises(error, match=match):
        ke.RunConfig().replace(steps_per_loop=value)


def test_steps_per_loop_is_replaceable_and_shown():
    config = ke.RunConfig().replace(steps_per_loop=50)
    assert config.steps_per_loop == 50
    assert "steps_per_loop=50" in repr(config)
    assert ke.RunConfig().steps_per_loop is None
