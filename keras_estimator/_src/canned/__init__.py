"""Premade estimators and their optimizers, checkpoint-compatible with tf.estimator 2.15."""
