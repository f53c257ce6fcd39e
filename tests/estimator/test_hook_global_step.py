"""Hooks see the global step, whatever keys the model_fn's outputs have.

tf.estimator 2.15's hooks read the step from the global step variable: a
prediction named 'global_step' was only a prediction.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

import keras_estimator as ke

X = np.ones((4, 2), np.float32)


def _model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.zeros_initializer())
    y = tf.matmul(features["x"], w)
    predictions = {"y": y, "global_step": tf.fill(tf.shape(y)[:1], tf.constant(1000, tf.int64))}
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions=predictions)
    loss = tf.reduce_mean(tf.square(y - labels))
    step = tf.compat.v1.train.get_global_step()
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _trained(tmp_path):
    est = ke.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(
        lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, X[:, :1])).batch(2).repeat(),
        steps=5,
    )
    return est


def _predict_input_fn(batch):
    return lambda: tf.data.Dataset.from_tensor_slices({"x": X}).batch(batch)


def test_a_prediction_named_global_step_is_not_the_step_hooks_see(tmp_path):
    """After 5 steps, StopAtStepHook(last_step=1000) in predict() never stops
    (2.15 yielded all 4 examples) though each batch predicts 'global_step'
    1000; StopAtStepHook(last_step=5) stops after the first batch, as
    in 2.15 (1 example of batches of 1, 2 of batches of 2: here batches of 2
    failed with 'only 0-dimensional arrays can be converted')."""
    est = _trained(tmp_path)
    never = ke.StopAtStepHook(last_step=1000)
    predictions = list(est.predict(_predict_input_fn(1), hooks=[never]))
    assert len(predictions) == 4
    assert [int(p["global_step"]) for p in predictions] == [1000] * 4
    for batch, expected in ((1, 1), (2, 2)):
        stop = ke.StopAtStepHook(last_step=5)
        assert len(list(est.predict(_predict_input_fn(batch), hooks=[stop]))) == expected
