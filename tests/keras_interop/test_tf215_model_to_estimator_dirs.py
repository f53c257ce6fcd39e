"""A model_dir tf.estimator 2.15's `model_to_estimator` wrote resumes here.

The fixture (tests/fixtures/make_tf215_model_to_estimator_dirs_fixture.py)
holds, per case (a functional model in each `checkpoint_format`, a Sequential
of auto-named layers in the default one), the model_dir 2.15 trained for 5
steps with Adam, the predictions from it, and the weights and predictions 2.15 reached
after 3 more steps. The same Keras model here must predict the same from the
model_dir and, resuming it, reach the same weights: only if the Adam slots
and the optimizer's step count (2.15 counted it in the global step) are read
from the checkpoint.
"""

from __future__ import annotations

import json
import pathlib
import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

FIXTURE = (
    pathlib.Path(__file__).parent.parent / "fixtures" / "tf215_model_to_estimator_dirs"
)
FEATURES = np.float32([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
LABELS = np.float32([[1.0], [2.0], [3.0], [4.0]])
MORE_STEPS = 3


# case -> (checkpoint_format, Sequential of auto-named layers?)
CASES = {
    "checkpoint": ("checkpoint", False),
    "saver": ("saver", False),
    "sequential_checkpoint": ("checkpoint", True),
}


def make_model(sequential=False):
    if sequential:
        model = keras.Sequential(
            [
                keras.Input(shape=(2,)),
                keras.layers.Dense(3, activation="tanh", name="dense"),
                keras.layers.Dense(1, name="dense_1"),
            ]
        )
    else:
        inputs = keras.Input(shape=(2,), name="x")
        hidden = keras.layers.Dense(3, activation="tanh", name="hidden")(inputs)
        outputs = keras.layers.Dense(1, name="out")(hidden)
        model = keras.Model(inputs, outputs)
    model.compile(keras.optimizers.Adam(0.1), "mse")
    return model


def input_fn():
    return (
        tf.data.Dataset.from_tensor_slices(({"x": FEATURES}, LABELS)).batch(4).repeat()
    )


def predictions(estimator):
    def predict_input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": FEATURES}).batch(4)

    return np.array([list(p.values())[0] for p in estimator.predict(predict_input_fn)])


def estimator_on_copy(tmp_path, case):
    checkpoint_format, sequential = CASES[case]
    model_dir = tmp_path / "model_dir"
    shutil.copytree(FIXTURE / case / "model_dir", model_dir)
    expected = json.loads((FIXTURE / case / "expected.json").read_text())
    estimator = ke.model_to_estimator(
        make_model(sequential),
        model_dir=str(model_dir),
        checkpoint_format=checkpoint_format,
    )
    return estimator, expected


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_2_15_model_dir_predicts_and_resumes_with_its_adam_state(tmp_path, case):
    estimator, expected = estimator_on_copy(tmp_path, case)
    np.testing.assert_allclose(
        predictions(estimator), expected["predictions_before"], rtol=1e-6, atol=1e-6
    )
    estimator.train(input_fn, steps=MORE_STEPS)
    assert estimator.get_variable_value("global_step") == expected["global_step_after"]
    for name, value in expected["weights_after"].items():
        np.testing.assert_allclose(
            estimator.get_variable_value(name),
            value,
            rtol=2e-5,
            atol=1e-6,
            err_msg=name,
        )
    np.testing.assert_allclose(
        predictions(estimator), expected["predictions_after"], rtol=2e-5, atol=1e-6
    )


def test_the_comparison_tells_restored_slots_from_fresh_ones(tmp_path):
    # Warm starting the weights alone (fresh Adam slots and step count) ends
    # elsewhere: the test above sees the optimizer state.
    expected = json.loads((FIXTURE / "saver" / "expected.json").read_text())
    settings = ke.WarmStartSettings(
        str(FIXTURE / "saver" / "model_dir"), vars_to_warm_start="(hidden|out)/.*"
    )
    model_dir = tmp_path / "fresh"
    estimator = ke.Estimator(
        ke.keras_model_fn(make_model()), str(model_dir), warm_start_from=settings
    )
    estimator.train(input_fn, steps=MORE_STEPS)
    kernel = estimator.get_variable_value("hidden/kernel")
    assert (
        np.abs(kernel - np.asarray(expected["weights_after"]["hidden/kernel"])).max()
        > 1e-3
    )
