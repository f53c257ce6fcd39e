"""Public-API behaviours tf.estimator 2.15's own tests pin, with 2.15's values.

Each test here carries what tf.estimator v2.15.0's own unit tests (or its own
run, tensorflow-estimator 2.15.0 on TF 2.15.1) expected of a call a program
makes through the public API.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(
        ({"x": np.ones((4, 1), np.float32)}, np.ones((4, 1), np.float32))
    ).batch(2)


def _model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.constant_initializer(0.5))
    prediction = tf.matmul(features["x"], w)
    loss = tf.reduce_mean(tf.square(prediction - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions={"p": prediction})


def test_get_variable_value_takes_a_variables_graph_name(tmp_path):
    # 2.15's baseline_estimator_test reads the step as
    # get_variable_value(optimizer.iterations.name), i.e. 'global_step:0':
    # 2.15's tf.train.load_variable dropped the ':0'. Here: "has no variable
    # 'global_step:0'".
    est = ke.Estimator(_model_fn, str(tmp_path / "model"))
    est.train(_input_fn, steps=2)
    assert est.get_variable_value("global_step:0") == 2
    # w: 0.5 -> 0.6 -> 0.68 (gradient 2 (w - 1), rate 0.1).
    np.testing.assert_allclose(est.get_variable_value("w:0"), [[0.68]], rtol=1e-6)
    np.testing.assert_allclose(est.get_variable_value("w"), [[0.68]], rtol=1e-6)
    with pytest.raises(ValueError, match="has no variable 'v'"):
        est.get_variable_value("v:0")
