"""evaluate() returns numpy values of each tensor's dtype, as tf.estimator 2.15 did.

2.15's results came from a session run: numpy scalars of the metric tensor's
dtype, arrays for other shapes, the global step an `np.int64`. Its own run
(tensorflow-estimator 2.15.0 on TF 2.15.1) of the model_fn below (w = 0.5 over
x = 0..7 in batches of 4, two SGD steps at 0.01 towards 1) returned:

    loss          np.float32 0.45184618
    m64           np.float32 1.026025    (v1 metrics.mean of float64 values)
    cnt           np.int32   7
    b             np.bool_   True
    vec           float32 array [0.5863, 0.87944996]
    global_step   np.int64   2

and a LinearRegressor over the same data (labels x > 3), two steps:
loss and average_loss np.float32 0.2178048, label/mean 0.5, prediction/mean
0.89725685, global_step np.int64 2. Here they were Python floats and ints.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

X = np.arange(8, dtype=np.float32).reshape(8, 1)


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, (X > 3).astype(np.int64))).batch(4)


def _model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable(
        "w", [1, 1], initializer=tf.compat.v1.constant_initializer(0.5)
    )
    p = tf.matmul(features["x"], w)
    loss = tf.reduce_mean(tf.square(p - 1.0))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
        loss, tf.compat.v1.train.get_global_step()
    )
    metrics = {
        "m64": tf.compat.v1.metrics.mean(tf.cast(p, tf.float64)),
        "cnt": (tf.constant(7), tf.no_op()),
        "vec": tf.compat.v1.metrics.mean_tensor(tf.reshape(p[:2], [2])),
        "b": (tf.constant(True), tf.no_op()),
    }
    return ke.EstimatorSpec(
        mode, loss=loss, train_op=train_op, predictions={"p": p}, eval_metric_ops=metrics
    )


def _check(value, kind, expected):
    assert type(value) is kind, (value, type(value))
    if kind is np.ndarray:
        assert value.dtype == np.float32
        np.testing.assert_allclose(value, expected, rtol=1e-6)
    else:
        assert value == pytest.approx(expected, rel=1e-6)


def test_a_model_fns_results_are_numpy_values_of_their_dtypes(tmp_path):
    est = ke.Estimator(_model_fn, str(tmp_path / "model"))
    est.train(_input_fn, steps=2)
    results = est.evaluate(_input_fn)
    assert sorted(results) == ["b", "cnt", "global_step", "loss", "m64", "vec"]
    _check(results["loss"], np.float32, 0.45184618)
    _check(results["m64"], np.float32, 1.026025)
    _check(results["cnt"], np.int32, 7)
    _check(results["b"], np.bool_, True)
    _check(results["vec"], np.ndarray, [0.5863, 0.87944996])
    _check(results["global_step"], np.int64, 2)


def test_a_canned_estimators_results_are_float32_and_an_int64_step(tmp_path):
    est = ke.LinearRegressor(
        [tf.feature_column.numeric_column("x")], model_dir=str(tmp_path / "model")
    )
    est.train(_input_fn, steps=2)
    results = est.evaluate(_input_fn)
    expected = {
        "average_loss": 0.2178048,
        "label/mean": 0.5,
        "loss": 0.2178048,
        "prediction/mean": 0.89725685,
    }
    assert sorted(results) == sorted([*expected, "global_step"])
    for key, value in expected.items():
        _check(results[key], np.float32, value)
    _check(results["global_step"], np.int64, 2)
