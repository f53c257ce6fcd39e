"""A read a hook builds in begin() sees the value its step started from.

A hook's `begin()` builds on the graph the model_fn made, after it: here
`tf.identity(w * 1.0)` of a variable the train_op adds 1 to. tf.estimator
2.15 left that read unordered against the update; it needed nothing
computed, so it ran first whenever the update needed anything (the batch,
the gradients). Run on tensorflow 2.15.1 + tensorflow-estimator 2.15.0,
with the update made of the batch, the hook got w's value from before the
step at all 200 steps, on one device and under a MirroredStrategy of two
CPUs; with an update of a constant, which nothing delays, it was left to
chance (107 of 200 before). Here the read is ordered before the update, so
every step gives the value from before it.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

_STEPS = 200


class _ReadMadeInBegin(tf.compat.v1.train.SessionRunHook):
    def begin(self):
        (w,) = [v for v in tf.compat.v1.global_variables() if v.name == "w:0"]
        self._read = tf.identity(w * 1.0)
        self.values = []

    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs(self._read)

    def after_run(self, run_context, run_values):
        self.values.append(float(run_values.results))


def _input_fn():
    return tf.data.Dataset.from_tensors(({"x": tf.ones([2, 2])}, tf.ones([2, 1]))).repeat()


def _model_fn(from_batch):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", shape=[], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_sum(features["x"]) * 0.0 + w
        increment = tf.reduce_sum(features["x"]) * 0.0 + 1.0 if from_batch else 1.0
        train_op = tf.group(
            w.assign_add(increment),
            tf.compat.v1.train.get_global_step().assign_add(1),
        )
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


@pytest.mark.parametrize("from_batch", [True, False], ids=["update_of_the_batch", "constant"])
@pytest.mark.parametrize("mirrored", [False, True], ids=["one_device", "mirrored"])
def test_every_step_fetches_the_value_it_started_from(tmp_path, from_batch, mirrored):
    config = ke.RunConfig(
        train_distribute=tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]) if mirrored else None
    )
    estimator = ke.Estimator(_model_fn(from_batch), model_dir=str(tmp_path), config=config)
    hook = _ReadMadeInBegin()
    estimator.train(_input_fn, steps=_STEPS, hooks=[hook])
    np.testing.assert_array_equal(hook.values, np.arange(_STEPS, dtype=np.float64))
    assert estimator.get_variable_value("w") == _STEPS
