"""A program's own tf.compat.v1.train optimizer in the v1 canned estimators.

tf.estimator 2.15's v1 canned classes called any `tf.compat.v1.train.Optimizer`
subclass they were given: one with an update of its own, or a TensorFlow
optimizer under another class name. Such optimizers were refused here. The
cases (`_program_optimizers.py`) and 2.15's figures
(`tests/fixtures/tf215_program_optimizers.json`, recorded by
`make_tf215_program_optimizers_fixture.py`): after 3 steps, every variable's
name and value, and the evaluation loss.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from keras_estimator.compat import estimator as v1_estimator
from tests.canned import _program_optimizers

FIXTURE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "tf215_program_optimizers.json"
)
TF215 = json.loads(FIXTURE.read_text())


@pytest.fixture(scope="module")
def ours():
    return _program_optimizers.run_cases(v1_estimator)


@pytest.mark.parametrize("case", sorted(TF215))
def test_a_programs_v1_optimizer_trains_as_in_2_15(ours, case):
    expected, got = TF215[case], ours[case]
    assert sorted(got["variables"]) == sorted(expected["variables"])
    for name, value in expected["variables"].items():
        np.testing.assert_allclose(
            got["variables"][name], value, rtol=2e-5, atol=1e-6, err_msg=name
        )
    assert got["loss"] == pytest.approx(expected["loss"], rel=2e-5)
