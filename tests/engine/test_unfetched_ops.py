"""A TRAIN model_fn's stateful ops run only when something run needs them, as in 2.15.

tf.estimator 2.15's session ran the train_op, the loss and the hooks'
fetches. An `assign_add` the model_fn built and nothing fetched never ran,
and a `layers.batch_normalization` whose `UPDATE_OPS` the
train_op did not wait for kept its moving mean at 0. The expected figures
are tf.estimator 2.15's (tensorflow-cpu 2.15.1, tensorflow-estimator 2.15.0),
from the same program run there.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator.compat import layers

# 2.15's kernel after 5 steps; every case trains the same.
KERNEL_2_15 = 1.2315239906311035
# The moving mean after 5 steps that run the BN update, momentum 0.99, over
# batch means 1.5, 5.5, 1.5, 5.5, 1.5 (2.15's figure, and the closed form).
MOVING_MEAN_UPDATED = 0.15192699432373047


def _input_fn():
    x = np.arange(8, dtype=np.float32).reshape(8, 1)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, x * 2)).batch(4).repeat()


def _model_fn(features, labels, mode, params):
    h = layers.batch_normalization(features["x"], training=mode == "train")
    pred = layers.dense(
        h, 1, kernel_initializer=tf.compat.v1.ones_initializer()
    )
    loss = tf.compat.v1.losses.mean_squared_error(labels, pred)
    counted = tf.compat.v1.get_variable(
        "counted", [], initializer=tf.zeros_initializer(), trainable=False
    )
    fetched = tf.compat.v1.get_variable(
        "fetched", [], initializer=tf.zeros_initializer(), trainable=False
    )
    # Built, never fetched: 2.15 never ran it.
    tf.compat.v1.assign_add(counted, 1.0)
    # Fetched by a hook at every other step: 2.15 ran it at those steps.
    tf.compat.v1.add_to_collection("bump", tf.compat.v1.assign_add(fetched, 1.0))
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.01)
    train_op = optimizer.minimize(loss, tf.compat.v1.train.get_global_step())
    if params["with_update_ops"]:
        update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
        train_op = tf.group(train_op, *update_ops)
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions=pred)


class _FetchEveryOtherRun(ke.SessionRunHook):
    def __init__(self):
        self.runs = 0

    def before_run(self, run_context):
        self.runs += 1
        if self.runs % 2 == 0:
            return ke.SessionRunArgs(tf.compat.v1.get_collection("bump"))
        return None


def _train(tmp_path, with_update_ops, hook, config=None):
    estimator = ke.Estimator(
        _model_fn,
        str(tmp_path),
        params={"with_update_ops": with_update_ops},
        config=config,
    )
    estimator.train(_input_fn, steps=5, hooks=[_FetchEveryOtherRun()] if hook else [])
    return {
        name.split("/")[-1]: float(np.ravel(estimator.get_variable_value(name))[0])
        for name in estimator.get_variable_names()
        if name.split("/")[-1] in ("counted", "fetched", "moving_mean", "kernel")
    }


@pytest.mark.parametrize(
    "with_update_ops, hook, moving_mean, fetched",
    [
        (False, False, 0.0, 0.0),
        (False, True, 0.0, 2.0),
        (True, False, MOVING_MEAN_UPDATED, 0.0),
        (True, True, MOVING_MEAN_UPDATED, 2.0),
    ],
)
def test_ops_nothing_fetches_do_not_run_as_in_2_15(
    tmp_path, with_update_ops, hook, moving_mean, fetched
):
    values = _train(tmp_path, with_update_ops, hook)
    assert values["counted"] == 0.0
    assert values["fetched"] == fetched
    assert values["moving_mean"] == pytest.approx(moving_mean, abs=1e-6)
    assert values["kernel"] == pytest.approx(KERNEL_2_15, abs=1e-6)


@pytest.mark.parametrize(
    "with_update_ops, moving_mean",
    [(False, 0.0), (True, 0.17153500020503998)],
)
def test_under_a_mirrored_strategy_as_in_2_15(tmp_path, with_update_ops, moving_mean):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    values = _train(
        tmp_path, with_update_ops, hook=False, config=ke.RunConfig(train_distribute=strategy)
    )
    assert values["counted"] == 0.0
    assert values["moving_mean"] == pytest.approx(moving_mean, abs=1e-6)
    assert values["kernel"] == pytest.approx(1.2843250036239624, abs=1e-6)


def _trained_spec(mode, labels, pred):
    """The spec of one gradient-descent step on the squared error of `pred`."""
    loss = tf.compat.v1.losses.mean_squared_error(labels, pred)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
        loss, tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_a_keras_layer_s_own_updates_still_run(tmp_path):
    """Keras 3 layers update their state in `call` and offer no op to fetch."""

    def model_fn(features, labels, mode):
        h = tf.keras.layers.BatchNormalization()(features["x"], training=mode == "train")
        pred = layers.dense(
            h, 1, kernel_initializer=tf.compat.v1.ones_initializer()
        )
        return _trained_spec(mode, labels, pred)

    estimator = ke.Estimator(model_fn, str(tmp_path))
    estimator.train(_input_fn, steps=5)
    [name] = [n for n in estimator.get_variable_names() if n.endswith("moving_mean")]
    assert float(estimator.get_variable_value(name)[0]) == pytest.approx(
        MOVING_MEAN_UPDATED, abs=1e-6
    )


def test_an_update_built_before_a_read_the_step_needs_does_not_run(tmp_path):
    # A traced step orders the read after the update; a TF1 session left them
    # unordered and ran only the read (2.15: the counter stays 0).
    def model_fn(features, labels, mode):
        counted = tf.compat.v1.get_variable(
            "counted", [], initializer=tf.zeros_initializer(), trainable=False
        )
        tf.compat.v1.assign_add(counted, 1.0)
        pred = layers.dense(features["x"], 1) + 0.0 * counted.read_value()
        return _trained_spec(mode, labels, pred)

    estimator = ke.Estimator(model_fn, str(tmp_path))
    estimator.train(_input_fn, steps=5)
    assert estimator.get_variable_value("counted") == 0.0
    assert estimator.get_variable_value("global_step") == 5
