"""add_metrics: the same model, evaluated with more metrics."""

import keras
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


def test_replacing_a_heads_keras_metric_evaluates_and_trains_on_as_in_2_15(tmp_path):
    # tf.estimator 2.15 (its own run): a DNNClassifier (hidden units [3],
    # tf_random_seed=1) with 'auc' replaced by a Keras Mean of the logistic
    # predictions evaluated auc 0.17360589 (= prediction/mean) and loss
    # 0.9857633 at step 2; a second Estimator on the model_dir trained on to
    # step 4: auc 0.1740067, loss 0.98444295. Here evaluate() failed with
    # "has no value for variables ['auc/true_positives', ...]": the head's
    # replaced AUC was taken for model state.
    x = np.random.RandomState(0).normal(size=(8, 1)).astype(np.float32)
    y = (np.arange(8) % 2).astype(np.int64).reshape(8, 1)

    def data():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(4)

    def metric_fn(predictions):
        mean = keras.metrics.Mean(name="mean_logistic")
        mean.update_state(predictions["logistic"])
        return {"auc": mean}

    def classifier():
        est = ke.DNNClassifier(
            [3],
            [tf.feature_column.numeric_column("x")],
            model_dir=str(tmp_path / "model"),
            config=ke.RunConfig(tf_random_seed=1),
        )
        return ke.add_metrics(est, metric_fn)

    est = classifier()
    est.train(data, steps=2)
    results = est.evaluate(data)
    assert results["auc"] == pytest.approx(0.17360589, rel=1e-5)
    assert results["loss"] == pytest.approx(0.9857633, rel=1e-5)
    assert not [n for n in est.get_variable_names() if n.startswith("auc")]
    again = classifier()
    again.train(data, steps=2)
    results = again.evaluate(data)
    assert results["global_step"] == 4
    assert results["auc"] == pytest.approx(0.1740067, rel=1e-5)
    assert results["loss"] == pytest.approx(0.98444295, rel=1e-5)
