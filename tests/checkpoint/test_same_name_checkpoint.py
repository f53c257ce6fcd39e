"""A checkpoint saved again under a name an Estimator already read is read again.

An Estimator remembers which checkpoint its variables hold, so that repeated
`evaluate()`/`predict()` calls do not read it again. A model_dir emptied and
trained again to the same step holds another `model.ckpt-<step>` under the
same name: the Estimator must read it (as tf.estimator 2.15 did, restoring on
every call), not answer with the values of the files that are gone.
"""

from __future__ import annotations

import shutil

import numpy as np
import tensorflow as tf

import keras_estimator as ke


def _model_fn(features, labels, mode, params):
    weight = tf.compat.v1.get_variable(
        "w", [], initializer=tf.compat.v1.zeros_initializer()
    )
    value = weight + 0.0 * tf.reduce_sum(features["x"], axis=1)
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"w": value})
    loss = tf.reduce_mean(value)
    if mode == ke.ModeKeys.EVAL:
        return ke.EstimatorSpec(
            mode, loss=loss, eval_metric_ops={"w": tf.compat.v1.metrics.mean(value)}
        )
    step = tf.compat.v1.train.get_global_step()
    train_op = tf.group(weight.assign_add(params["delta"]), step.assign_add(1))
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": [[1.0], [2.0]]}, [0.0, 0.0])).batch(2)


def _estimator(model_dir, delta):
    return ke.Estimator(_model_fn, model_dir=str(model_dir), params={"delta": delta})


def _retrain(model_dir, delta):
    """Empties model_dir and trains one step of `delta` into it: model.ckpt-1 again."""
    shutil.rmtree(model_dir)
    _estimator(model_dir, delta).train(_input_fn, steps=1)


def test_evaluate_and_predict_read_a_checkpoint_saved_again_under_the_same_name(tmp_path):
    model_dir = tmp_path / "model"
    reader = _estimator(model_dir, 1.0)
    reader.train(_input_fn, steps=1)
    assert reader.evaluate(_input_fn)["w"] == 1.0
    assert next(reader.predict(_input_fn))["w"] == 1.0

    _retrain(model_dir, 5.0)
    assert reader.latest_checkpoint().endswith("model.ckpt-1")
    np.testing.assert_equal(reader.evaluate(_input_fn)["w"], 5.0)
    np.testing.assert_equal(next(reader.predict(_input_fn))["w"], 5.0)

    _retrain(model_dir, 7.0)
    np.testing.assert_equal(next(reader.predict(_input_fn))["w"], 7.0)
    np.testing.assert_equal(reader.evaluate(_input_fn)["w"], 7.0)


def test_train_continues_from_a_checkpoint_saved_again_under_the_same_name(tmp_path):
    model_dir = tmp_path / "model"
    trainer = _estimator(model_dir, 1.0)
    trainer.train(_input_fn, steps=1)

    _retrain(model_dir, 5.0)
    trainer.train(_input_fn, steps=1)
    np.testing.assert_equal(trainer.get_variable_value("w"), 6.0)
    np.testing.assert_equal(trainer.get_variable_value("global_step"), 2)


def test_unchanged_checkpoint_is_not_read_again(tmp_path, monkeypatch):
    """Repeated calls on an unchanged checkpoint open no reader (they cost no read)."""
    from keras_estimator._src.checkpoint import checkpoints

    estimator = _estimator(tmp_path / "model", 1.0)
    estimator.train(_input_fn, steps=1)
    estimator.evaluate(_input_fn)
    next(estimator.predict(_input_fn))
    opened = []
    real = checkpoints.restore
    monkeypatch.setattr(
        checkpoints, "restore", lambda *args, **kwargs: opened.append(args) or real(*args, **kwargs)
    )
    for _ in range(2):
        assert estimator.evaluate(_input_fn)["w"] == 1.0
        assert next(estimator.predict(_input_fn))["w"] == 1.0
    assert opened == []
