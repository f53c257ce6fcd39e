"""`RunConfig(train_distribute=tf.compat.v1.distribute.MirroredStrategy(...))` as in 2.15.

TF1-era programs give the v1 class. tf.estimator 2.15 (reference venv, two
logical CPUs, `ReductionToOneDevice`) trained the model_fn below 3 steps to
w = [0.18919049, 0.19357750] and evaluated loss 0.059809037, mae 0.21288957
over 2 steps and loss 0.17521866, mae 0.34927985 over the whole input, as
with TF2's class. Here training stopped with an AttributeError inside the
step ('dict' object has no attribute 'dtype').
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

import keras_estimator as ke

X = np.linspace(-1, 1, 48, dtype=np.float32).reshape(24, 2)
Y = (X @ np.array([[1.5], [-0.5]], np.float32) + 0.25).astype(np.float32)


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(4)


def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.zeros_initializer())
    prediction = features["x"] @ w
    loss = tf.compat.v1.losses.mean_squared_error(labels, prediction)
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    metrics = {"mae": tf.compat.v1.metrics.mean_absolute_error(labels, prediction)}
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def test_the_v1_class_trains_and_evaluates_as_2_15(tmp_path):
    strategy = tf.compat.v1.distribute.MirroredStrategy(
        ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice()
    )
    config = ke.RunConfig(train_distribute=strategy, tf_random_seed=1)
    est = ke.Estimator(model_fn, str(tmp_path), config=config)
    est.train(input_fn, steps=3)
    np.testing.assert_allclose(
        est.get_variable_value("w").ravel(), [0.18919049, 0.19357750], rtol=1e-6
    )
    two = est.evaluate(input_fn, steps=2)
    np.testing.assert_allclose([two["loss"], two["mae"]], [0.059809037, 0.21288957], rtol=1e-6)
    whole = est.evaluate(input_fn)
    np.testing.assert_allclose(
        [whole["loss"], whole["mae"]], [0.17521866, 0.34927985], rtol=1e-6
    )
    assert whole["global_step"] == 3
