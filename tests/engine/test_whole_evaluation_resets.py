"""Each evaluate() resets the metric variables by one traced call.

Every evaluation starts its metrics from their initial values, as each
tf.estimator 2.15 evaluation graph ran its local-variable initializers.
Initial values that are constants (the metrics' zeros) are assigned by one
traced call of the store; any other initial value (a random draw, another
variable's value) is computed eagerly at each reset, as before.
"""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.framework import op_callbacks

import keras_estimator as ke
from keras_estimator.compat import layers
from tests._models import make_data

_X, _Y = make_data(num_examples=40)


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).batch(8)


def _model_fn(features, labels, mode):
    logits = layers.dense(features["x"], 3)
    classes = tf.argmax(logits, 1)
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"class_ids": classes})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(
        mode,
        loss=loss,
        train_op=train_op,
        eval_metric_ops={
            "accuracy": tf.compat.v1.metrics.accuracy(labels, classes),
            "mean_x": tf.compat.v1.metrics.mean(features["x"]),
        },
    )


class _EagerOps:
    def __init__(self):
        self.types = []

    def __call__(self, op_type, inputs, attrs, outputs, op_name=None, graph=None):
        if graph is None:
            self.types.append(op_type.decode() if isinstance(op_type, bytes) else op_type)

    def __enter__(self):
        op_callbacks.add_op_callback(self)
        return self

    def __exit__(self, *exc):
        op_callbacks.remove_op_callback(self)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    est = ke.Estimator(_model_fn, model_dir=str(tmp_path_factory.mktemp("resets")))
    est.train(lambda: _input_fn().repeat(), steps=4)
    return est


def test_metric_variables_are_reset_without_eager_assignments(trained):
    first = trained.evaluate(_input_fn)
    with _EagerOps() as ops:
        again = trained.evaluate(_input_fn)
    assert "AssignVariableOp" not in ops.types, ops.types
    assert again == first
    np.testing.assert_allclose(first["mean_x"], _X.mean(), rtol=1e-6)


def test_a_local_variable_with_a_drawn_initial_value_is_drawn_at_each_reset(tmp_path):
    """A non-constant initial value stays eager: each evaluation draws it anew."""

    def model_fn(features, labels, mode):
        noise = tf.compat.v1.get_local_variable(
            "noise", shape=[], initializer=tf.compat.v1.random_uniform_initializer()
        )
        w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(features["x"]) * w
        return ke.EstimatorSpec(
            mode,
            loss=loss,
            train_op=tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1),
            eval_metric_ops={"noise": (tf.identity(noise), tf.no_op())},
        )

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(lambda: _input_fn().repeat(), steps=1)
    draws = {float(est.evaluate(_input_fn)["noise"]) for _ in range(3)}
    assert len(draws) == 3
    assert all(0.0 <= d < 1.0 for d in draws)
