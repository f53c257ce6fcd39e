"""What a run that fetches for hooks keeps from one step to the next, and what it must not."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.engine import fetches as _fetches
from keras_estimator._src.engine import hook_callback as _hook_callback
from tests._models import input_fn, make_data, mlp_model_fn


def _named_model_fn(features, labels, mode, params):
    spec = mlp_model_fn(features, labels, mode, params)
    if spec.loss is None:
        return spec
    return spec._replace(loss=tf.identity(spec.loss, name="the_loss"))


def _estimator(tmp_path):
    return ke.Estimator(
        _named_model_fn,
        str(tmp_path),
        params={"hidden": [6], "optimizer": "sgd"},
        config=ke.RunConfig(tf_random_seed=3),
    )


class _SwitchingHook(ke.SessionRunHook):
    """Fetches through one dict it changes in place: the loss, then the global step."""

    def __init__(self, switch_at):
        self.fetches = {"value": "the_loss:0"}
        self.switch_at = switch_at
        self.seen = []

    def before_run(self, run_context):
        if run_context.global_step >= self.switch_at:
            self.fetches["value"] = "global_step"
        return ke.SessionRunArgs(self.fetches)

    def after_run(self, run_context, run_values):
        self.seen.append((run_context.global_step, run_values.results["value"]))


def test_a_hook_asking_the_same_every_step_gets_one_plan(tmp_path, monkeypatch):
    made = []
    plan_class = _fetches.FetchPlan

    def counting(requests):
        made.append(requests)
        return plan_class(requests)

    monkeypatch.setattr(_hook_callback._fetches, "FetchPlan", counting)

    class Loss(ke.SessionRunHook):
        def before_run(self, run_context):
            return ke.SessionRunArgs("the_loss:0")

    x, y = make_data(32)
    _estimator(tmp_path).train(input_fn(x, y, batch_size=8), steps=20, hooks=[Loss()])
    # The default hooks ask for other values at some steps: a plan each time
    # the requests change, not one per step.
    assert 0 < len(made) <= 6


def test_a_fetch_dict_changed_in_place_is_fetched_as_it_now_is(tmp_path):
    x, y = make_data(32)
    hook = _SwitchingHook(switch_at=4)
    _estimator(tmp_path).train(input_fn(x, y, batch_size=8), steps=8, hooks=[hook])
    steps = [step for step, _ in hook.seen]
    assert steps == list(range(1, 9))
    for step, value in hook.seen:
        if step - 1 >= 4:  # the global step, read as the step began
            assert value == step - 1 and np.asarray(value).dtype == np.int64
        else:
            assert np.asarray(value).dtype == np.float32 and 0.0 < value < 10.0


class _Fetching(ke.SessionRunHook):
    """Fetches `names` on every step; keeps each step's global step and values."""

    def __init__(self, names):
        self.names = names
        self.seen = []

    def before_run(self, run_context):
        return ke.SessionRunArgs(self.names)

    def after_run(self, run_context, run_values):
        self.seen.append((run_context.global_step, [np.asarray(v) for v in run_values.results]))


def _with_hidden_sum(features, labels, mode, params):
    spec = _named_model_fn(features, labels, mode, params)
    if mode == ke.ModeKeys.TRAIN:
        # A tensor the step computes but does not return: fetching it prunes
        # a copy of the step of its own.
        tf.reduce_sum(tf.compat.v1.trainable_variables()[0] * 2.0, name="not_an_output")
    return spec


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_fetching_a_step_output_gives_the_values_of_a_pruned_step(tmp_path, monkeypatch, optimizer):
    """The loss, an output of the step, is fetched from the fused loop's copy of
    the step (its summaries left out) rather than a copy pruned for it, as is
    the global step: each step's values, the summaries and the weights are
    those of the run fetching them beside a tensor that is not an output."""
    from keras_estimator._src.engine import step_functions as _step_functions

    pruned_for = []
    prune = _step_functions._SharedStep._prune

    def spy(self, extra, directories):
        if not directories:  # steps writing summaries prune copies of their own
            pruned_for.append([getattr(t, "name", t) for t in extra])
        return prune(self, extra, directories)

    monkeypatch.setattr(_step_functions._SharedStep, "_prune", spy)
    x, y = make_data(48, seed=5)
    runs = {}
    for names in (["the_loss:0", "global_step"], ["the_loss:0", "global_step", "not_an_output:0"]):
        pruned_for.clear()
        estimator = ke.Estimator(
            _with_hidden_sum,
            str(tmp_path / str(len(names))),
            params={"hidden": [6], "optimizer": optimizer},
            config=ke.RunConfig(tf_random_seed=7, save_summary_steps=3),
        )
        hook = _Fetching(names)
        estimator.train(input_fn(x, y, batch_size=8), steps=7, hooks=[hook])
        runs[len(names)] = (estimator, hook.seen, list(pruned_for))
    (fast, fast_seen, fast_pruned), (pruned, pruned_seen, pruned_pruned) = runs[2], runs[3]
    assert not any("the_loss:0" in extra for extra in fast_pruned)
    # (Built after minimize, it is computed from the reads before the update:
    # `not_an_output_before_update`.)
    assert any(
        name.startswith("not_an_output") for extra in pruned_pruned for name in extra
    )
    assert [step for step, _ in fast_seen] == [step for step, _ in pruned_seen] == list(range(1, 8))
    for (_, values), (_, pruned_values) in zip(fast_seen, pruned_seen, strict=True):
        assert [v.tobytes() for v in values] == [v.tobytes() for v in pruned_values[:2]]
    # Each step's own global step (whichever read of it the fetch is).
    fetched_steps = [values[1].item() for _, values in fast_seen]
    assert fetched_steps == list(range(fetched_steps[0], fetched_steps[0] + 7))
    assert fast.get_variable_names() == pruned.get_variable_names()
    for name in fast.get_variable_names():
        np.testing.assert_array_equal(
            fast.get_variable_value(name), pruned.get_variable_value(name), err_msg=name
        )
    assert _loss_summaries(tmp_path / "2") == _loss_summaries(tmp_path / "3")


def _loss_summaries(directory):
    found = []
    for path in sorted(directory.glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                if value.tag == "loss":
                    found.append((event.step, tf.make_ndarray(value.tensor).tobytes()
                                  if value.HasField("tensor") else value.simple_value))
    return found
