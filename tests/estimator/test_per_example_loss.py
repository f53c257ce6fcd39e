"""A loss of unknown size (one value per example) is a scalar when it holds one.

tf.estimator 2.15 accepted a loss of shape [None] or [None, 1] and reshaped
it to a scalar when the step ran: with batches of 1 (the metrics/optimizers
migration guide) it trained and evaluated; with larger batches the step
failed with an InvalidArgumentError.
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator.compat import layers

FEATURES = np.array([[1.0, 1.5], [2.0, 2.5], [3.0, 3.5]], np.float32)
LABELS = np.array([0, 0, 1], np.int32)


def model_fn(features, labels, mode, params):
    logits = layers.dense(features, 2)
    loss = tf.compat.v1.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits
    )
    if params["keepdims"]:
        loss = loss[:, None]  # shape [None, 1]
    train_op = tf.compat.v1.train.AdagradOptimizer(0.05).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn(batch_size):
    return lambda: tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(batch_size)


@pytest.mark.parametrize("keepdims", [False, True])
def test_a_per_example_loss_of_batches_of_1_trains_and_evaluates(tmp_path, keepdims):
    est = ke.Estimator(model_fn, model_dir=str(tmp_path), params={"keepdims": keepdims})
    est.train(input_fn(1))
    assert est.get_variable_value("global_step") == 3
    kernel = est.get_variable_value("dense/kernel")
    bias = est.get_variable_value("dense/bias")
    logits = FEATURES @ kernel + bias
    per_example = np.log(np.exp(logits).sum(1)) - logits[np.arange(3), LABELS]
    result = est.evaluate(input_fn(1))
    np.testing.assert_allclose(result["loss"], per_example.mean(), rtol=1e-5)


def test_a_per_example_loss_of_a_larger_batch_fails_when_the_step_runs(tmp_path):
    est = ke.Estimator(model_fn, model_dir=str(tmp_path), params={"keepdims": False})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"loss must be a scalar"):
        est.train(input_fn(3))
