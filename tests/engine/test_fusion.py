"""Hook-aware step fusion gives exactly what step-by-step execution gives."""

import tempfile

import numpy as np
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from tests._models import make_data, mlp_model_fn
from tests.engine.test_properties import periodic_input_fn


class StopAt(ke.SessionRunHook):
    """Requests a stop after `step`; tells the loop so runs can be fused."""

    def __init__(self, step):
        self.step = step

    def steps_until_needed(self, global_step):
        return max(self.step - global_step, 1)

    def after_run(self, run_context, run_values):
        if run_context.global_step >= self.step:
            run_context.request_stop()


class EveryStep(ke.SessionRunHook):
    """A hook with no schedule: the loop must show it every step."""

    def __init__(self):
        self.steps = []

    def after_run(self, run_context, run_values):
        self.steps.append(run_context.global_step)


def train(params, schedule, step_by_step):
    x, y = make_data(num_examples=12)
    seen = []
    hooks = [
        ke.LoggingTensorHook(
            {"loss": "the_loss", "step": "global_step"},
            every_n_iter=schedule["log_every"],
            formatter=lambda values: seen.append(
                (int(values["step"]), float(values["loss"]))
            ) or "",
        ),
        ke.StopAtStepHook(last_step=schedule["last_step"]),
        StopAt(schedule["stop_at"]),
    ]
    recorder = EveryStep()
    if step_by_step:
        hooks.append(recorder)

    def model_fn(features, labels, mode, params):
        spec = mlp_model_fn(features, labels, mode, params)
        return spec._replace(loss=tf.identity(spec.loss, name="the_loss"))

    with tempfile.TemporaryDirectory() as model_dir:
        est = ke.Estimator(
            model_fn,
            model_dir=model_dir,
            params=params,
            config=ke.RunConfig(
                tf_random_seed=5, save_checkpoints_steps=schedule["save_every"]
            ),
        )
        est.train(periodic_input_fn(x, y, 4, 3), steps=schedule["steps"], hooks=hooks)
        weights = {n: est.get_variable_value(n) for n in est.get_variable_names()}
    return weights, seen, recorder.steps


@given(
    params=st.fixed_dictionaries(
        {"hidden": st.lists(st.integers(2, 6), min_size=1, max_size=2),
         "optimizer": st.sampled_from(["adam", "sgd"])}
    ),
    schedule=st.fixed_dictionaries(
        {
            "log_every": st.integers(1, 9),
            "save_every": st.integers(1, 12),
            "steps": st.integers(1, 30),
            "last_step": st.integers(1, 30),
            "stop_at": st.integers(1, 30),
        }
    ),
)
def test_fused_equals_step_by_step(params, schedule):
    fused_weights, fused_seen, _ = train(params, schedule, step_by_step=False)
    single_weights, single_seen, single_steps = train(params, schedule, step_by_step=True)
    final = min(schedule["steps"], schedule["last_step"], schedule["stop_at"])
    assert int(fused_weights["global_step"]) == final
    assert single_steps == list(range(1, final + 1))  # really step by step
    assert fused_weights.keys() == single_weights.keys()
    for name in fused_weights:
        np.testing.assert_array_equal(fused_weights[name], single_weights[name], name)
    # The logging hook saw the same steps and the same per-step losses.
    assert fused_seen == single_seen
    # Logged at iterations 0, N, 2N, ... with the global step each ran at.
    expected_steps = [k * schedule["log_every"] for k in range(final)]
    assert [s for s, _ in fused_seen] == [s for s in expected_steps if s < final]
