"""`LoggingTensorHook(at_end=True)` logs tensors that read no batch, as 2.15 did.

Tensors named in the hook that depend only on variables (the global step, a
weight, a product of one) used to be logged as None at the end of training,
unless a tensor reading the batch was logged with them. The expected
figures are tf.estimator 2.15's (tensorflow-cpu 2.15.1, tensorflow-estimator
2.15.0) on the same program: 7 steps of gradient descent (0.01) of
y = w x on x = [1, 2], y = 2x, from w = 0.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator

v1 = tf.compat.v1

_X = np.array([[1.0], [2.0]], np.float32)
# 2.15's values at the end of train(steps=7).
_AT_END = {"gs": 7.0, "w": [[0.60333]], "w2": [[1.20665]], "loss": 4.87675}


def _input_fn():
    return tf.data.Dataset.from_tensors(({"x": _X}, 2 * _X)).repeat()


def _model_fn(features, labels, mode):
    w = v1.get_variable("w", [1, 1], initializer=v1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels), name="my_loss")
    tf.identity(v1.train.get_global_step(), name="gs_read")
    tf.identity(w, name="w_read")
    tf.identity(w * 2.0, name="w_times_2")
    train_op = v1.train.GradientDescentOptimizer(0.01).minimize(loss, v1.train.get_global_step())
    return keras_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


@pytest.mark.parametrize(
    "tensors",
    [
        {"gs": "gs_read"},
        {"w": "w_read"},
        {"w2": "w_times_2"},
        {"gs": "gs_read", "w": "w_read:0"},
        {"gs": "gs_read", "loss": "my_loss"},
    ],
    ids=["step", "weight", "product", "two", "with_the_loss"],
)
def test_values_at_end_are_2_15s(tmp_path, tensors):
    logged = []
    hook = keras_estimator.LoggingTensorHook(
        tensors, at_end=True, formatter=lambda values: logged.append(dict(values)) or ""
    )
    est = keras_estimator.Estimator(_model_fn, str(tmp_path))
    est.train(_input_fn, steps=7, hooks=[hook])
    assert len(logged) == 1
    assert sorted(logged[0]) == sorted(tensors)
    for tag, value in logged[0].items():
        assert value is not None, tag
        np.testing.assert_allclose(np.asarray(value), _AT_END[tag], rtol=1e-4)
