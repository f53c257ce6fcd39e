"""A model_dir written by tf.estimator 2.15 is restored and trained further.

The fixture (tests/fixtures/tf215_iris, made by make_tf215_fixture.py with
tf.estimator 2.15 on TF 2.15) holds TF1 name-based checkpoints of an iris MLP
built with tf.compat.v1.layers; the same model_fn written with
keras_estimator.compat.layers must reproduce its predictions and evaluation.
"""

import json
import shutil
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator.compat import layers

FIXTURE = Path(__file__).parents[1] / "fixtures" / "tf215_iris"


def load_iris():
    text = resources.files("keras_estimator").joinpath("data/iris.csv").read_text()
    rows = np.loadtxt(text.splitlines()[1:], delimiter=",")
    return rows[:, :4].astype("float32"), rows[:, 4].astype("int32")


def model_fn(features, labels, mode):
    h = layers.dense(features["x"], 16, activation=tf.nn.relu)
    logits = layers.dense(h, 3)
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(
            mode, predictions={"logits": logits, "class_ids": tf.argmax(logits, 1)}
        )
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == ke.ModeKeys.EVAL:
        accuracy = tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))
        return ke.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
    optimizer = tf.compat.v1.train.AdagradOptimizer(0.1)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


@pytest.fixture
def legacy_model_dir(tmp_path):
    target = tmp_path / "model_dir"
    shutil.copytree(FIXTURE / "model_dir", target)
    return target


def test_predictions_match_tf_estimator(legacy_model_dir):
    x, _ = load_iris()
    expected = np.load(FIXTURE / "predictions.npz")
    est = ke.Estimator(model_fn, model_dir=str(legacy_model_dir))
    rows = list(
        est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(50))
    )
    logits = np.stack([r["logits"] for r in rows])
    np.testing.assert_allclose(logits, expected["logits"], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal([r["class_ids"] for r in rows], expected["class_ids"])


def test_evaluation_matches_tf_estimator(legacy_model_dir):
    x, y = load_iris()
    expected = json.loads((FIXTURE / "eval.json").read_text())
    est = ke.Estimator(model_fn, model_dir=str(legacy_model_dir))
    metrics = est.evaluate(
        lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(50)
    )
    assert metrics["global_step"] == expected["global_step"] == 60
    assert metrics["accuracy"] == pytest.approx(expected["accuracy"], abs=1e-6)
    assert metrics["loss"] == pytest.approx(expected["loss"], rel=1e-5)


def test_training_continues_from_its_step(legacy_model_dir):
    x, y = load_iris()
    est = ke.Estimator(model_fn, model_dir=str(legacy_model_dir))
    before = est.get_variable_value("dense/kernel/Adagrad")
    est.train(
        lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(32),
        steps=15,
    )
    assert est.get_variable_value("global_step") == 75
    assert est.latest_checkpoint().endswith("model.ckpt-75")
    # The optimizer state came from the old checkpoint and kept accumulating.
    after = est.get_variable_value("dense/kernel/Adagrad")
    assert np.all(after >= before) and not np.allclose(after, before)
    state = tf.train.get_checkpoint_state(str(legacy_model_dir))
    kept = [Path(p).name for p in state.all_model_checkpoint_paths]
    assert kept[-1] == "model.ckpt-75" and "model.ckpt-20" in kept
    assert set(est.get_variable_names()) == {
        "dense/bias", "dense/bias/Adagrad", "dense/kernel", "dense/kernel/Adagrad",
        "dense_1/bias", "dense_1/bias/Adagrad", "dense_1/kernel",
        "dense_1/kernel/Adagrad", "global_step",
    }
