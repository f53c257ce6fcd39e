"""The one-unit dense program both checkpoint-initialisation test modules run.

A dense layer starting at kernel 0.5, bias 0.25, trained by gradient descent
(0.1) on y = 3x + 1 in batches of 8. Trained 3 steps it is checkpoint A,
which `init_from_checkpoint` (`test_checkpoint_ops_in_model_fn.py`) and a
Scaffold's `init_fn` (`test_scaffold_init_fn.py`) start other Estimators
from; each module holds 2.15's figures for what follows.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

import keras_estimator

v1 = tf.compat.v1

X = np.linspace(-1, 1, 32).reshape(-1, 1).astype(np.float32)
Y = (3 * X + 1).astype(np.float32)

# tf.estimator 2.15: kernel and bias of checkpoint A (3 steps).
A = (0.7721856, 0.3925815)


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(8).repeat()


def model_fn_from(init_checkpoint=None, saver=False, init_fn_of=None, init_fn_after=None):
    """The program's model_fn.

    Args:
        init_checkpoint: a checkpoint `init_from_checkpoint` maps `out/` from.
        saver: whether the model_fn makes a `tf.compat.v1.train.Saver()` it
            leaves unused.
        init_fn_of: mode -> the Scaffold `init_fn` the spec gives (None: no
            Scaffold).
        init_fn_after: (kernel, features) -> the Scaffold `init_fn` of a
            training or evaluation spec, made after `minimize()` (so that
            what it builds comes after the training ops in the graph).
    """

    def model_fn(features, labels, mode):
        out = keras_estimator.compat.layers.dense(
            features["x"],
            1,
            name="out",
            kernel_initializer=v1.constant_initializer(0.5),
            bias_initializer=v1.constant_initializer(0.25),
        )
        if init_checkpoint is not None:
            v1.train.init_from_checkpoint(init_checkpoint, {"out/": "out/"})
        if saver:
            v1.train.Saver()
        scaffold = None
        if init_fn_of is not None:
            scaffold = v1.train.Scaffold(init_fn=init_fn_of(mode))
        if mode == keras_estimator.ModeKeys.PREDICT:
            return keras_estimator.EstimatorSpec(mode, predictions=out, scaffold=scaffold)
        loss = v1.losses.mean_squared_error(labels, out)
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, v1.train.get_global_step()
        )
        if init_fn_after is not None:
            (kernel,) = [v for v in v1.global_variables() if v.name == "out/kernel:0"]
            scaffold = v1.train.Scaffold(init_fn=init_fn_after(kernel, features))
        return keras_estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, predictions=out, scaffold=scaffold
        )

    return model_fn


def weights(est):
    """The Estimator's (kernel, bias)."""
    return (
        float(est.get_variable_value("out/kernel").ravel()[0]),
        float(est.get_variable_value("out/bias").ravel()[0]),
    )


def train_checkpoint_a(model_dir):
    """Trains checkpoint A into `model_dir`, checking 2.15's weights; returns the dir."""
    est = keras_estimator.Estimator(model_fn_from(), model_dir)
    est.train(input_fn, steps=3)
    np.testing.assert_allclose(weights(est), A, rtol=1e-6)
    return model_dir
