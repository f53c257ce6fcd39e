"""A canned estimator's optimizer may have a negative learning rate, as in 2.15.

tf.keras 2's optimizers and `tf.compat.v1.train`'s took a negative
`learning_rate`, and tf.estimator 2.15's canned estimators trained with it
(up the loss's slope). The cases, their data and 2.15's variables before and
after training and evaluate()'s loss are recorded by
`tests/fixtures/make_tf215_negative_learning_rate_fixture.py`; here the same
expressions, evaluated under `install()`, train to 2.15's values.
"""

from __future__ import annotations

import json
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from tests.fixtures import make_tf215_negative_learning_rate_fixture as recipes

FIXTURE = json.loads(
    (
        Path(__file__).resolve().parents[1] / "fixtures" / "tf215_negative_learning_rate.json"
    ).read_text()
)
FAST = ["dnn_classifier_legacy_adagrad", "linear_regressor_legacy_sgd"]


def _values(est):
    return {name: est.get_variable_value(name) for name in est.get_variable_names()}


def _assert_variables(ours, expected, what):
    assert sorted(ours) == sorted(expected), what
    for name, value in expected.items():
        np.testing.assert_allclose(
            ours[name], value, rtol=1e-5, atol=1e-6, err_msg=f"{what}: {name}"
        )


def _train_as_2_15(case, tmp_path):
    expected = FIXTURE["results"][case]
    with ke.install():
        est = recipes.make(tf, tf.keras.optimizers.legacy, case, str(tmp_path / case))
        input_fn = recipes.input_fn_for(tf, case)
        est.train(input_fn, steps=FIXTURE["steps"])
        initial = tf.train.load_checkpoint(str(tmp_path / case / "model.ckpt-0"))
        _assert_variables(
            {name: initial.get_tensor(name) for name in expected["initial"]},
            expected["initial"],
            "step 0",
        )
        _assert_variables(_values(est), expected["final"], f"step {FIXTURE['steps']}")
        loss = est.evaluate(input_fn, steps=2)["loss"]
    np.testing.assert_allclose(loss, expected["loss"], rtol=1e-5)


@pytest.mark.parametrize("case", FAST)
def test_a_negative_learning_rate_trains_as_in_2_15(case, tmp_path):
    # Refused before: "learning_rate must be >= 0, got -0.05".
    _train_as_2_15(case, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(set(FIXTURE["results"]) - set(FAST)))
def test_every_canned_kind_trains_as_in_2_15_with_a_negative_rate(case, tmp_path):
    _train_as_2_15(case, tmp_path)


def test_a_keras_optimizer_with_a_negative_rate_climbs_the_loss(tmp_path):
    # 2.15 refused Keras 2's new optimizers in its graph; Keras 3 optimizers
    # are taken here, and keep their (negative) rate: the SGD step of a
    # linear model from 0 is -lr * gradient.
    x = np.array([[1.0], [3.0]], np.float32)
    y = np.array([[2.0], [4.0]], np.float32)
    est = ke.LinearRegressor(
        [tf.feature_column.numeric_column("x")],
        optimizer=keras.optimizers.SGD(learning_rate=-0.1),
        model_dir=str(tmp_path),
    )
    est.train(lambda: tf.data.Dataset.from_tensors(({"x": x}, y)), steps=1)
    # Mean squared error over the batch: d/dw = -mean(2 * x * y) = -14.
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/x/weights"), [[-1.4]])
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/bias_weights"), [-0.6])
