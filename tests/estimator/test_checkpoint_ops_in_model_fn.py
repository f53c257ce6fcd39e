"""Checkpoint reads and writes a model_fn builds for training.

A TF1 session ran `tf.compat.v1.train.init_from_checkpoint`'s restores once,
as the variables' initializers on a fresh start (a checkpoint in model_dir
won over them), and a Saver's ops only when its save() or restore() was
called. init_from_checkpoint runs as 2.15 ran it: its restores happen once,
where 2.15's initializers ran, and never inside a step. A Saver made in a
model_fn builds no ops (`tests/estimator/test_scaffold_v1_saver.py` covers
one given as the Scaffold's saver); other checkpoint reads, which a training
step would run at every step, are refused at the first trace with the way
forward.

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
from tests._models import write_forced_summary
from tests.estimator._one_unit_dense import A as _A
from tests.estimator._one_unit_dense import input_fn as _input_fn
from tests.estimator._one_unit_dense import model_fn_from as _model_fn_from
from tests.estimator._one_unit_dense import train_checkpoint_a
from tests.estimator._one_unit_dense import weights as _weights

v1 = tf.compat.v1

# tf.estimator 2.15, init_from_checkpoint from A (and, identically, its
# warm_start_from): kernel and bias after 10 and 20 steps, and the loss
# evaluate() gives on 4 batches after 20.
_AFTER_10 = (1.9660524, 0.83358556)
_AFTER_20 = (2.5298102, 0.9347221)
_LOSS_AFTER_20 = 0.082708396


@pytest.fixture(scope="module")
def checkpoint_a(tmp_path_factory):
    return train_checkpoint_a(str(tmp_path_factory.mktemp("a")))


def test_init_from_checkpoint_starts_training_from_it_once(checkpoint_a, tmp_path):
    est = keras_estimator.Estimator(_model_fn_from(init_checkpoint=checkpoint_a), str(tmp_path))
    est.train(_input_fn, steps=10)
    np.testing.assert_allclose(_weights(est), _AFTER_10, rtol=1e-5)
    # The second call resumes from model_dir's checkpoint, not from A.
    est.train(_input_fn, steps=10)
    np.testing.assert_allclose(_weights(est), _AFTER_20, rtol=1e-5)
    assert est.evaluate(_input_fn, steps=4)["loss"] == pytest.approx(_LOSS_AFTER_20, rel=1e-5)
    # So does a new Estimator on the same model_dir.
    again = keras_estimator.Estimator(
        _model_fn_from(init_checkpoint=checkpoint_a), str(tmp_path)
    )
    prediction = next(again.predict(lambda: tf.data.Dataset.from_tensors({"x": [[1.0]]})))
    assert float(np.ravel(prediction)[0]) == pytest.approx(sum(_AFTER_20), rel=1e-5)


def test_init_from_checkpoint_with_hooks_starts_each_call_where_the_last_ended(
    checkpoint_a, tmp_path
):
    # Hooks make each train() call the model_fn again (as 2.15 did); the
    # variables then exist, and A is not read again.
    est = keras_estimator.Estimator(_model_fn_from(init_checkpoint=checkpoint_a), str(tmp_path))
    est.train(_input_fn, steps=10, hooks=[keras_estimator.StepCounterHook()])
    est.train(_input_fn, steps=10, hooks=[keras_estimator.StepCounterHook()])
    np.testing.assert_allclose(_weights(est), _AFTER_20, rtol=1e-5)


def test_prediction_from_a_fresh_model_dir_uses_the_checkpoint_initialized_from(
    checkpoint_a, tmp_path
):
    # 2.15 ran its initializers, the restores from A, with no checkpoint to
    # predict from.
    est = keras_estimator.Estimator(_model_fn_from(init_checkpoint=checkpoint_a), str(tmp_path))
    prediction = next(est.predict(lambda: tf.data.Dataset.from_tensors({"x": [[1.0]]})))
    assert float(np.ravel(prediction)[0]) == pytest.approx(sum(_A), rel=1e-6)


def test_init_from_checkpoint_of_a_tensor_of_another_shape_is_2_15s_error(
    checkpoint_a, tmp_path
):
    def model_fn(features, labels, mode):
        out = keras_estimator.compat.layers.dense(features["x"], 2, name="out")
        v1.train.init_from_checkpoint(checkpoint_a, {"out/": "out/"})
        loss = tf.reduce_mean(out)
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, v1.train.get_global_step()
        )
        return keras_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = keras_estimator.Estimator(model_fn, str(tmp_path))
    with pytest.raises(ValueError, match="doesn't match with shape of tensor out/"):
        est.train(_input_fn, steps=1)
    assert not any(name.startswith("model.ckpt") for name in os.listdir(tmp_path))


def test_a_saver_built_in_a_training_model_fn_runs_as_in_2_15(checkpoint_a, tmp_path):
    # A TF1 session ran a Saver's ops only in save() or restore(); made and
    # left unused, it changed nothing, and it builds no ops here either.
    est = keras_estimator.Estimator(_model_fn_from(saver=True), str(tmp_path / "new"))
    est.train(_input_fn, steps=3)
    np.testing.assert_allclose(_weights(est), _A, rtol=1e-6)
    est = keras_estimator.Estimator(
        _model_fn_from(init_checkpoint=checkpoint_a, saver=True), str(tmp_path / "init")
    )
    est.train(_input_fn, steps=10)
    np.testing.assert_allclose(_weights(est), _AFTER_10, rtol=1e-5)


def _restoring_model_fn(checkpoint, forced_summary=False):
    """The program's model_fn, also building a restore of A's kernel it never fetches."""

    def model_fn(features, labels, mode):
        spec = _model_fn_from()(features, labels, mode)
        tf.raw_ops.RestoreV2(
            prefix=tf.train.latest_checkpoint(checkpoint),
            tensor_names=["out/kernel"],
            shape_and_slices=[""],
            dtypes=[tf.float32],
        )
        if forced_summary and mode == keras_estimator.ModeKeys.TRAIN:
            write_forced_summary(spec.loss)
        return spec

    return model_fn


def test_a_checkpoint_read_built_in_a_training_model_fn_and_not_fetched_never_runs(
    checkpoint_a, tmp_path
):
    # As in 2.15: the session never ran it, and 3 steps from the initial
    # values give A.
    est = keras_estimator.Estimator(_restoring_model_fn(checkpoint_a), str(tmp_path))
    est.train(_input_fn, steps=3)
    np.testing.assert_allclose(_weights(est), _A, rtol=1e-6)


def test_where_every_op_runs_a_checkpoint_read_is_refused_with_the_fix(checkpoint_a, tmp_path):
    est = keras_estimator.Estimator(
        _restoring_model_fn(checkpoint_a, forced_summary=True), str(tmp_path)
    )
    with pytest.raises(ValueError, match="reads a checkpoint") as raised:
        est.train(_input_fn, steps=2)
    assert "warm_start_from" in str(raised.value)


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


def test_tensorflow_s_initializer_function_is_its_own_again_after_training(
    checkpoint_a, tmp_path
):
    from tensorflow.python.training import checkpoint_utils

    est = keras_estimator.Estimator(_model_fn_from(init_checkpoint=checkpoint_a), str(tmp_path))
    est.train(_input_fn, steps=1)
    assert checkpoint_utils._set_checkpoint_initializer.__module__ == checkpoint_utils.__name__


def _checkpoint_of(tmp_path, values):
    """A TF1 checkpoint holding `values` (name -> array), as a pretrained model's."""
    with tf.Graph().as_default():
        for name, value in values.items():
            v1.get_variable(name, initializer=value, trainable=name != "global_step")
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            return v1.train.Saver().save(
                session, str(tmp_path / "pretrained.ckpt"), write_meta_graph=False
            )


def _root_mapping_model_fn(checkpoint, assignment_map):
    def model_fn(features, labels, mode):
        w = v1.get_variable("w", [3, 1], initializer=v1.zeros_initializer())
        v1.train.init_from_checkpoint(checkpoint, assignment_map)
        return keras_estimator.EstimatorSpec(
            mode,
            loss=tf.reduce_mean(tf.matmul(features, w)),
            train_op=v1.assign_add(v1.train.get_global_step(), 1),
        )

    return model_fn


def _ones_input_fn():
    return tf.data.Dataset.from_tensors(np.ones((2, 3), np.float32)).repeat()


def test_a_map_of_the_root_scope_restores_the_global_step_too_as_in_2_15(tmp_path):
    # 2.15 made the global step with get_variable before the model_fn, so
    # {"/": "/"} restored it with the rest: training went on from step 5.
    checkpoint = _checkpoint_of(
        tmp_path, {"w": np.full([3, 1], 7.0, np.float32), "global_step": np.int64(5)}
    )
    model_dir = tmp_path / "model"
    est = keras_estimator.Estimator(
        _root_mapping_model_fn(checkpoint, {"/": "/"}), str(model_dir)
    )
    est.train(_ones_input_fn, steps=3)

    assert est.get_variable_value("global_step") == 8
    np.testing.assert_array_equal(est.get_variable_value("w"), np.full([3, 1], 7.0))
    saved = sorted(name for name in os.listdir(model_dir) if name.endswith(".index"))
    assert saved == ["model.ckpt-5.index", "model.ckpt-8.index"]


def test_a_root_map_from_a_scope_without_the_global_step_is_2_15s_error(tmp_path):
    checkpoint = _checkpoint_of(tmp_path, {"pre/w": np.full([3, 1], 7.0, np.float32)})
    est = keras_estimator.Estimator(
        _root_mapping_model_fn(checkpoint, {"pre/": "/"}), str(tmp_path / "model")
    )
    with pytest.raises(ValueError, match=r"Tensor pre/global_step .* is not found in"):
        est.train(_ones_input_fn, max_steps=1)


def test_get_variable_of_the_global_step_in_a_model_fn_is_2_15s_error(tmp_path):
    def model_fn(features, labels, mode):
        step = v1.get_variable(
            "global_step", [], tf.int64, initializer=v1.zeros_initializer(), trainable=False
        )
        w = v1.get_variable("w", [3, 1])
        return keras_estimator.EstimatorSpec(
            mode, loss=tf.reduce_mean(tf.matmul(features, w)), train_op=v1.assign_add(step, 1)
        )

    est = keras_estimator.Estimator(model_fn, str(tmp_path))
    with pytest.raises(ValueError, match="Variable global_step already exists, disallowed"):
        est.train(_ones_input_fn, steps=1)
