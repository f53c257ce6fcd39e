"""Stock hooks in `train(hooks=...)` and in `Model.fit` via `HookCallback`, against tf.estimator 2.15.

`tests/fixtures/make_tf215_stock_hooks_fixture.py` ran the program on 2.15:
LoggingTensorHook (every 3 steps and at end), CheckpointSaverHook to another
directory with a CheckpointSaverListener, StepCounterHook, NanTensorHook,
GlobalStepWaiterHook, FinalOpsHook and InMemoryEvaluatorHook over 10 steps, then StopAtStepHook(last_step=7) and
StopAtStepHook(num_steps=3). The same program runs here in `Estimator.train`
and in `model_fn_to_keras(...).fit(callbacks=[HookCallback(hooks)])`; both
must leave what 2.15 left (`tests/fixtures/tf215_stock_hooks/results.json`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import keras_estimator as ke
from tests.fixtures import make_tf215_stock_hooks_fixture as fixture

_EXPECTED = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "tf215_stock_hooks" / "results.json").read_text()
)


class _Api:
    EstimatorSpec = ke.EstimatorSpec
    LoggingTensorHook = ke.LoggingTensorHook
    CheckpointSaverHook = ke.CheckpointSaverHook
    StepCounterHook = ke.StepCounterHook
    NanTensorHook = ke.NanTensorHook
    GlobalStepWaiterHook = ke.GlobalStepWaiterHook
    FinalOpsHook = ke.FinalOpsHook
    CheckpointSaverListener = ke.CheckpointSaverListener
    InMemoryEvaluatorHook = ke.experimental.InMemoryEvaluatorHook


def _trainer(entry, model_dir):
    """(what InMemoryEvaluatorHook evaluates, train(hooks, steps)) for `entry`:
    "estimator" (`Estimator.train`) or "fit" (`Model.fit` through HookCallback)."""
    model_fn = fixture.make_model_fn(_Api)
    if entry == "estimator":
        estimator = ke.Estimator(model_fn, model_dir=str(model_dir))
        return estimator, lambda hooks, steps: estimator.train(fixture.input_fn, steps=steps, hooks=hooks)
    model = ke.model_fn_to_keras(model_fn, str(model_dir))
    return model, lambda hooks, steps: model.fit(
        fixture.input_fn(), steps_per_epoch=steps or 1000, callbacks=[ke.HookCallback(hooks)]
    )


@pytest.mark.parametrize("entry", ["estimator", "fit"])
def test_stock_hooks_leave_what_2_15s_left(tmp_path, entry):
    evaluated, train = _trainer(entry, tmp_path / "model")
    hooks, recorded, final_ops = fixture.make_hooks(_Api, str(tmp_path), evaluated)
    train(hooks, fixture.STEPS)
    mine = fixture.read_results(str(tmp_path), str(tmp_path / "model"), recorded, final_ops)
    # Steps, files, tags and listener calls exactly; values to float32 rounding.
    for key in ("saver_checkpoint_steps", "model_dir_checkpoint_steps", "step_counter_steps",
                "global_step", "listened"):
        assert mine[key] == _EXPECTED[key], key
    assert [sorted(row) for row in mine["logged"]] == [sorted(row) for row in _EXPECTED["logged"]]
    for got, want in zip(mine["logged"], _EXPECTED["logged"], strict=True):
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6, err_msg=name)
    for name, want in _EXPECTED["final_ops_values"].items():
        np.testing.assert_allclose(mine["final_ops_values"][name], want, rtol=1e-5, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(mine["w_sum"], _EXPECTED["w_sum"], rtol=1e-5, atol=1e-6)
    # InMemoryEvaluatorHook: evaluations at 0, 4, 8 and 10 with 2.15's losses
    # (written as scalar tensors here, as simple values by 2.15).
    assert sorted(mine["evaluations"]) == sorted(_EXPECTED["evaluations"]) == ["loss"]
    got, want = np.array(mine["evaluations"]["loss"]), np.array(_EXPECTED["evaluations"]["loss"])
    np.testing.assert_array_equal(got[:, 0], want[:, 0])
    np.testing.assert_allclose(got[:, 1], want[:, 1], rtol=1e-5)


@pytest.mark.parametrize("entry", ["estimator", "fit"])
def test_stop_at_step_hooks_stop_where_2_15s_stopped(tmp_path, entry):
    steps = []
    for hook in (ke.StopAtStepHook(last_step=7), ke.StopAtStepHook(num_steps=3)):
        _, train = _trainer(entry, tmp_path / "stop")
        train([hook], None)
        steps.append(int(ke.Estimator(fixture.make_model_fn(_Api), str(tmp_path / "stop")).get_variable_value("global_step")))
    assert steps == _EXPECTED["stop_at_step"] == [7, 10]


@pytest.mark.parametrize("entry", ["estimator", "fit"])
@pytest.mark.parametrize("name", sorted(fixture.STOP_HOOKS))
def test_early_stopping_hooks_stop_where_2_15s_stopped(tmp_path, entry, name):
    # Evaluations at steps 1, 3, 5, 8 (losses 0.5, 0.4, 0.6, 2.0) already in
    # eval/; the hook checks every 4 steps over train(steps=30). 2.15 stopped
    # after step 1 (higher than 1.0; no decrease in 2; no increase in 2: the
    # step-3 evaluation is 2 steps after the best, step 1) or ran all 30.
    fixture.write_eval_losses(str(tmp_path / "stop" / "eval"))
    evaluated, train = _trainer(entry, tmp_path / "stop")
    train([fixture.make_stop_hook(ke.experimental, name, evaluated)], 30)
    step = int(ke.Estimator(fixture.make_model_fn(_Api), str(tmp_path / "stop")).get_variable_value("global_step"))
    assert step == _EXPECTED["early_stopping"][name]
