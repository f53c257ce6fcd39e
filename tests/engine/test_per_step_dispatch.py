"""What a run that fetches for hooks keeps from one step to the next, and what it must not."""

import numpy as np
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
