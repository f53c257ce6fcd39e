"""Writing checkpoints as tf.estimator 2.15's tests wrote them by hand."""

import os

import tensorflow as tf


def write_tf1_checkpoint(model_dir, values, step=100):
    """A TF1 `model.ckpt` in `model_dir` holding `values` (name -> value) and `global_step`.

    Returns:
        `model_dir` as a string.
    """
    with tf.Graph().as_default():
        for name, value in values.items():
            tf.Variable(value, name=name, dtype=tf.float32)
        global_step = tf.compat.v1.train.create_global_step()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(global_step.assign(step))
            tf.compat.v1.train.Saver().save(session, os.path.join(model_dir, "model.ckpt"))
    return str(model_dir)
