"""A tf.estimator 2.15 program whose every estimator name is supported (read by check, never run)."""

import tensorflow as tf
from tensorflow.estimator import RunConfig


def model_fn(features, labels, mode):
    logits = tf.keras.layers.Dense(3)(features["x"])
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


estimator = tf.estimator.Estimator(model_fn, config=RunConfig(tf_random_seed=1))
hook = tf.compat.v1.train.LoggingTensorHook({"loss": "loss"}, every_n_iter=10)
keras_estimator = tf.keras.estimator.model_to_estimator(keras_model=None)
exporter = tf.estimator.export.build_raw_serving_input_receiver_fn({})
