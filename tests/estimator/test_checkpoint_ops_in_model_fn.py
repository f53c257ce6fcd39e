"""Checkpoint reads and writes a model_fn builds for training.

A TF1 session ran `tf.compat.v1.train.init_from_checkpoint`'s restores once,
as the variables' initializers on a fresh start, and a Saver's ops only when
its save() or restore() was called. A training step here runs every op the
model_fn builds, so such an op would run at every step: a restore put the
checkpoint's values back before each update (training never got past one
step), a Saver's restore failed on its default file name. Both are refused
at the first trace with the way forward, `warm_start_from`, which gives
tf.estimator 2.15's init_from_checkpoint result exactly.

The expected figures are tf.estimator 2.15's (tensorflow-cpu 2.15.1,
tensorflow-estimator 2.15.0), run on the same program: a one-unit dense
layer starting at kernel 0.5, bias 0.25, trained 3 steps of gradient
descent (0.1) on y = 3x + 1 into checkpoint A; a second Estimator starting
from A by `init_from_checkpoint(A, {"out/": "out/"})`, trained 10 then 10
more steps.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator

v1 = tf.compat.v1

_X = np.linspace(-1, 1, 32).reshape(-1, 1).astype(np.float32)
_Y = (3 * _X + 1).astype(np.float32)

# tf.estimator 2.15, init_from_checkpoint from A (and, identically, its
# warm_start_from): kernel and bias after 10 and 20 steps, and the loss
# evaluate() gives on 4 batches after 20.
_AFTER_10 = (1.9660524, 0.83358556)
_AFTER_20 = (2.5298102, 0.9347221)
_LOSS_AFTER_20 = 0.082708396
_A = (0.7721856, 0.3925815)


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).batch(8).repeat()


def _model_fn_from(init_checkpoint=None, saver=False):
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
        if mode == keras_estimator.ModeKeys.PREDICT:
            return keras_estimator.EstimatorSpec(mode, predictions=out)
        loss = v1.losses.mean_squared_error(labels, out)
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, v1.train.get_global_step()
        )
        return keras_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions=out)

    return model_fn


def _weights(est):
    return (
        float(est.get_variable_value("out/kernel").ravel()[0]),
        float(est.get_variable_value("out/bias").ravel()[0]),
    )


@pytest.fixture(scope="module")
def checkpoint_a(tmp_path_factory):
    model_dir = str(tmp_path_factory.mktemp("a"))
    est = keras_estimator.Estimator(_model_fn_from(), model_dir)
    est.train(_input_fn, steps=3)
    np.testing.assert_allclose(_weights(est), _A, rtol=1e-6)
    return model_dir


def test_init_from_checkpoint_in_training_is_refused_with_the_fix(checkpoint_a, tmp_path):
    est = keras_estimator.Estimator(_model_fn_from(init_checkpoint=checkpoint_a), str(tmp_path))
    with pytest.raises(ValueError, match="reads a checkpoint") as raised:
        est.train(_input_fn, steps=10)
    message = str(raised.value)
    assert "init_from_checkpoint" in message
    assert "warm_start_from=tf.estimator.WarmStartSettings(" in message
    assert "RestoreV2" in message
    # Nothing trained, so nothing was saved that a later call would resume.
    assert not any(name.startswith("model.ckpt") for name in os.listdir(tmp_path))


def test_a_saver_built_in_the_model_fn_is_refused_with_the_fix(tmp_path):
    est = keras_estimator.Estimator(_model_fn_from(saver=True), str(tmp_path))
    with pytest.raises(ValueError, match="writes a checkpoint") as raised:
        est.train(_input_fn, steps=2)
    assert "tf.compat.v1.train.Saver" in str(raised.value)


def test_the_warm_start_it_names_gives_2_15s_init_from_checkpoint_result(checkpoint_a, tmp_path):
    est = keras_estimator.Estimator(
        _model_fn_from(),
        str(tmp_path),
        warm_start_from=keras_estimator.WarmStartSettings(checkpoint_a, vars_to_warm_start="out/.*"),
    )
    est.train(_input_fn, steps=10)
    np.testing.assert_allclose(_weights(est), _AFTER_10, rtol=1e-5)
    est.train(_input_fn, steps=10)
    np.testing.assert_allclose(_weights(est), _AFTER_20, rtol=1e-5)
    assert est.evaluate(_input_fn, steps=4)["loss"] == pytest.approx(_LOSS_AFTER_20, rel=1e-5)


def test_evaluate_and_predict_still_take_a_model_fn_calling_init_from_checkpoint(
    checkpoint_a, tmp_path
):
    # As in 2.15, model_dir's checkpoint wins over the one the model_fn
    # initialises from; only what evaluation and prediction fetch runs.
    trained = keras_estimator.Estimator(
        _model_fn_from(),
        str(tmp_path),
        warm_start_from=keras_estimator.WarmStartSettings(checkpoint_a, vars_to_warm_start="out/.*"),
    )
    trained.train(_input_fn, steps=10)
    trained.train(_input_fn, steps=10)
    est = keras_estimator.Estimator(_model_fn_from(init_checkpoint=checkpoint_a), str(tmp_path))
    metrics = est.evaluate(_input_fn, steps=4)
    assert metrics["loss"] == pytest.approx(_LOSS_AFTER_20, rel=1e-5)
    assert metrics["global_step"] == 20
    prediction = next(est.predict(lambda: tf.data.Dataset.from_tensors({"x": [[1.0]]})))
    assert float(np.ravel(prediction)[0]) == pytest.approx(sum(_AFTER_20), rel=1e-5)
