"""ProfilerHook writes traces TensorBoard's profile plugin reads."""

import logging
import re

import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn

X, Y = make_data()


def test_profiles_the_scheduled_steps(tmp_path, caplog):
    est = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path / "model"), params={})
    traces = tmp_path / "profile"
    hook = ke.ProfilerHook(save_steps=4, output_dir=str(traces))
    with caplog.at_level(logging.INFO, logger="keras_estimator"):
        est.train(input_fn(X, Y), steps=6, hooks=[hook])
    traced = re.findall(r"Saved a profile of step (\d+)", caplog.text)
    assert traced == ["1", "5"]
    # Runs are named by the second they start; both traces may share one.
    runs = sorted((traces / "plugins" / "profile").iterdir())
    assert runs and all(list(run.glob("*.xplane.pb")) for run in runs)
    assert est.get_variable_value("global_step") == 6


def test_needs_exactly_one_schedule():
    import pytest

    with pytest.raises(ValueError, match="every_secs or every_steps"):
        ke.ProfilerHook(output_dir="x")
