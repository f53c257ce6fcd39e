"""tf.estimator 2.15 model_dirs trained with a tf.keras 2 optimizer resume here.

The fixture (tests/fixtures/make_tf215_keras_optimizer_fixture.py) holds, per
optimizer, a model_dir 2.15 trained for a few steps and the variables 2.15
reached after more steps; the same model_fn with the Keras 3 optimizer resumes
the model_dir and must reach them: the weights, and so the optimizer slots it
restored under their tf.keras 2 names.
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
from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.checkpoint import keras2_optimizer_names

FIXTURE = pathlib.Path(__file__).parent.parent / "fixtures" / "tf215_keras_optimizer"
FIRST_STEPS = 4
MORE_STEPS = 4
FEATURES = np.float32([[1.0, 1.5], [2.0, 2.5], [3.0, 3.5], [0.5, -1.0]])
LABELS = np.float32([[0.3], [0.5], [0.7], [0.1]])

# The Keras 3 optimizers of the fixture's tf.keras 2 ones.
OPTIMIZERS = {
    "adam": lambda: keras.optimizers.Adam(0.1),
    "sgd_momentum": lambda: keras.optimizers.SGD(0.05, momentum=0.9),
    "adagrad": lambda: keras.optimizers.Adagrad(0.3),
    "rmsprop_momentum": lambda: keras.optimizers.RMSprop(0.05, momentum=0.5),
}


def input_fn():
    return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).repeat().batch(2)


def make_model_fn(make_optimizer):
    def model_fn(features, labels, mode):
        model = keras.Sequential(
            [keras.layers.Dense(1, kernel_initializer="ones", name="dense")],
            name="sequential",
        )
        output = model(features, training=mode == ModeKeys.TRAIN)
        loss = tf.reduce_mean(tf.square(output - labels))
        optimizer = make_optimizer()
        optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
        variables = model.trainable_variables
        gradients = tf.compat.v1.gradients(loss, variables)
        train_op = optimizer.apply_gradients(zip(gradients, variables, strict=True))
        return EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


@pytest.mark.parametrize("case", sorted(OPTIMIZERS))
def test_a_2_15_model_dir_resumes_with_its_optimizer_state(tmp_path, case):
    model_dir = tmp_path / "model_dir"
    shutil.copytree(FIXTURE / case / "model_dir", model_dir)
    expected = json.loads((FIXTURE / case / "after.json").read_text())
    est = ke.Estimator(make_model_fn(OPTIMIZERS[case]), str(model_dir))
    est.train(input_fn, steps=MORE_STEPS)
    assert est.get_variable_value("global_step") == FIRST_STEPS + MORE_STEPS
    for name in ("sequential/dense/kernel", "sequential/dense/bias"):
        np.testing.assert_allclose(
            est.get_variable_value(name), expected[name], rtol=2e-5, atol=1e-6
        )


def test_the_state_matters_fresh_slots_train_elsewhere(tmp_path):
    # The comparison above can tell restored slots from fresh ones: warm
    # starting the weights alone (fresh Adam slots) ends far from 2.15.
    expected = json.loads((FIXTURE / "adam" / "after.json").read_text())
    settings = ke.WarmStartSettings(
        str(FIXTURE / "adam" / "model_dir"), vars_to_warm_start="sequential/.*"
    )
    est = ke.Estimator(
        make_model_fn(OPTIMIZERS["adam"]), str(tmp_path), warm_start_from=settings
    )
    est.train(input_fn, steps=MORE_STEPS)
    kernel = est.get_variable_value("sequential/dense/kernel")
    assert np.abs(kernel - np.asarray(expected["sequential/dense/kernel"])).max() > 1e-3


@pytest.mark.parametrize(
    ("name", "keys", "alias"),
    [
        (
            "adam/sequential_dense_kernel_momentum",
            ["Adam/sequential/dense/kernel/m"],
            0,
        ),
        (
            "adam/sequential_dense_kernel_velocity",
            ["Adam/sequential/dense/kernel/v"],
            0,
        ),
        ("rm_sprop/d_1_kernel_velocity", ["RMSprop/d_1/kernel/rms"], 0),
        ("sgd/dense_bias_momentum", ["SGD/dense/bias/momentum"], 0),
        ("adam_1/dense_bias_momentum", ["Adam/dense/bias/m", "Adam_1/dense/bias/m"], 1),
        ("adam/learning_rate", ["Adam/learning_rate", "Adam/beta_1"], 0),
        ("adam/iteration", ["Adam/iter"], 0),
        # tf.keras 2 in a graph (2.15's model_to_estimator): under training/.
        ("adam/dense_kernel_velocity", ["training/Adam/dense/kernel/v"], 0),
        # No candidate: another optimizer, another variable, another slot.
        ("adam/dense_bias_momentum", ["SGD/dense/bias/momentum"], None),
        ("adam/dense_bias_momentum", ["Adam/dense/kernel/m"], None),
        ("adagrad/dense_bias_accumulator", ["Adagrad/dense/bias/m"], None),
        ("global_step", ["Adam/iter"], None),
    ],
)
def test_aliases(name, keys, alias):
    found = keras2_optimizer_names.aliases([name], keys)
    assert found == ({} if alias is None else {name: keys[alias]})


def test_an_optimizer_without_its_own_step_count_counted_in_the_global_step():
    keys = ["global_step", "training/Adam/dense/kernel/m"]
    missing = ["adam/iteration", "adam/dense_kernel_momentum"]
    assert keras2_optimizer_names.aliases(missing, keys) == {
        "adam/iteration": "global_step",
        "adam/dense_kernel_momentum": "training/Adam/dense/kernel/m",
    }
    # Not when none of the optimizer's variables are tf.keras 2's, nor when it
    # kept its own count.
    assert keras2_optimizer_names.aliases(["adam/iteration"], keys) == {}
    assert keras2_optimizer_names.aliases(missing, [*keys, "Adam/iter"]) == {
        "adam/iteration": "Adam/iter",
        "adam/dense_kernel_momentum": "training/Adam/dense/kernel/m",
    }


def test_a_slot_keras_3_names_under_its_model_takes_the_most_specific_name():
    # tf.keras 2 saved a Sequential's slots without the model's name.
    keys = ["training/Adam/dense/kernel/m", "training/Adam/outer_dense/kernel/m"]
    found = keras2_optimizer_names.aliases(
        [
            "adam/sequential_dense_kernel_momentum",
            "adam/model_outer_dense_kernel_momentum",
        ],
        keys,
    )
    assert found == {
        "adam/sequential_dense_kernel_momentum": "training/Adam/dense/kernel/m",
        "adam/model_outer_dense_kernel_momentum": "training/Adam/outer_dense/kernel/m",
    }
