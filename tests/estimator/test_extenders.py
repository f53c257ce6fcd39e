"""add_metrics: the same model, evaluated with more metrics."""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator import compat
from keras_estimator.compat import layers
from tests._models import input_fn, make_data

X, Y = make_data()
PARAMS = {"learning_rate": 0.1}


def model_fn(features, labels, mode, params):
    """Predictions in every mode, as metric_fns read them."""
    logits = layers.dense(features["x"], 3)
    predictions = {"classes": tf.argmax(logits, 1)}
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    accuracy = tf.compat.v1.metrics.accuracy(labels, predictions["classes"])
    return ke.EstimatorSpec(
        mode,
        predictions=predictions,
        loss=loss,
        train_op=train_op,
        eval_metric_ops={"accuracy": accuracy},
    )


def _trained(tmp_path):
    est = ke.Estimator(model_fn, model_dir=str(tmp_path), params=PARAMS)
    est.train(input_fn(X, Y), steps=20)
    return est


def test_added_metrics_are_evaluated_beside_the_model_fns(tmp_path):
    seen_config = []

    def metric_fn(labels, predictions, features, config):
        seen_config.append(config)
        correct = tf.cast(tf.equal(tf.cast(labels, tf.int64), predictions["classes"]), tf.float32)
        mean_label = tf.keras.metrics.Mean()
        mean_label.update_state(tf.cast(labels, tf.float32))
        return {
            "my_accuracy": tf.compat.v1.metrics.mean(correct),
            "mean_label": mean_label,
            "max_x": tf.compat.v1.metrics.mean(tf.reduce_max(features["x"])),
        }

    est = _trained(tmp_path)
    extended = ke.add_metrics(est, metric_fn)
    assert extended.model_dir == est.model_dir
    assert repr(extended.config) == repr(est.config)
    eval_input = input_fn(X, Y, batch_size=64, repeat=False)
    base = est.evaluate(eval_input)
    results = extended.evaluate(eval_input)
    assert results["accuracy"] == pytest.approx(base["accuracy"])
    assert results["loss"] == pytest.approx(base["loss"])
    assert results["global_step"] == base["global_step"] == 20
    assert results["my_accuracy"] == pytest.approx(base["accuracy"], rel=1e-6)
    assert results["mean_label"] == pytest.approx(float(np.mean(Y)), rel=1e-6)
    assert results["max_x"] == pytest.approx(float(X.max()), rel=1e-6)
    assert seen_config and repr(seen_config[0]) == repr(est.config)
    # Training goes on in the shared model_dir, with the model_fn's params.
    extended.train(input_fn(X, Y), steps=5)
    assert est.evaluate(eval_input)["global_step"] == 25


def test_a_metric_of_the_same_name_replaces_the_model_fns(tmp_path):
    def metric_fn(labels):
        return {"accuracy": tf.compat.v1.metrics.mean(tf.ones_like(labels, tf.float32))}

    extended = ke.add_metrics(_trained(tmp_path), metric_fn)
    assert extended.evaluate(input_fn(X, Y, repeat=False))["accuracy"] == 1.0


def test_v1_namespace_and_install_expose_it():
    assert compat.estimator.add_metrics is ke.add_metrics
    with ke.install():
        assert tf.estimator.add_metrics is ke.add_metrics
        assert tf.compat.v1.estimator.add_metrics is ke.add_metrics


def test_bad_arguments(tmp_path):
    est = ke.Estimator(model_fn, model_dir=str(tmp_path), params=PARAMS)
    with pytest.raises(ValueError, match=r"takes \['params'\].*only \['features', 'labels', 'predictions', 'config'\]"):
        ke.add_metrics(est, lambda labels, params: {})
    with pytest.raises(TypeError, match="metric_fn must be callable, got 3"):
        ke.add_metrics(est, 3)
    with pytest.raises(TypeError, match="needs an Estimator as `estimator`, got str"):
        ke.add_metrics("model_dir", lambda labels: {})
    not_a_dict = ke.add_metrics(_trained(tmp_path / "t"), lambda labels: [1])
    with pytest.raises(TypeError, match="must return a dict of metrics, got list"):
        not_a_dict.evaluate(input_fn(X, Y, repeat=False))
