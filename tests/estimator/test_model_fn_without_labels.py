"""A model_fn without `labels` and an input_fn that gives labels, as in tf.estimator 2.15.

2.15 (its own run): train() and evaluate() raise ValueError "model_fn does not
take labels, but input_fn returns labels." before any step; with an input_fn
giving features only both run; predict() keeps the features and drops the
labels, so it runs with either input_fn.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

X = np.ones((4, 1), np.float32)


def model_fn(features, mode):
    weight = tf.compat.v1.get_variable("w", [1, 1])
    predictions = tf.matmul(features["x"], weight)
    loss = tf.reduce_mean(predictions)
    step = tf.compat.v1.train.get_global_step()
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
    return ke.EstimatorSpec(mode, predictions={"p": predictions}, loss=loss, train_op=train_op)


def with_labels():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, X)).batch(2)


def features_only():
    return tf.data.Dataset.from_tensor_slices({"x": X}).batch(2)


def test_labels_given_to_a_model_fn_without_labels_are_refused(tmp_path):
    estimator = ke.Estimator(model_fn, model_dir=str(tmp_path))
    pattern = r"^model_fn does not take labels, but input_fn returns labels\. .*`model_fn`"
    with pytest.raises(ValueError, match=pattern):
        estimator.train(with_labels, steps=1)
    assert estimator.latest_checkpoint() is None  # refused before any step
    estimator.train(features_only, steps=1)
    with pytest.raises(ValueError, match=pattern):
        estimator.evaluate(with_labels, steps=1)
    assert estimator.evaluate(features_only, steps=1)["global_step"] == 1
    # predict() reads the features only, as in 2.15.
    assert len(list(estimator.predict(with_labels))) == 4
