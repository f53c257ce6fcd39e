"""A Keras metric in eval_metric_ops that model_fn never updates is refused, as in 2.15.

tf.estimator 2.15 (its own run, tensorflow-estimator 2.15.0 on TF 2.15.1): a
model_fn returning `eval_metric_ops={'my_mean': tf.keras.metrics.Mean()}`
with the metric never updated stopped train() with

    ValueError: Please call update_state(...) on the "mean" metric

(model_fn_test.py asserts the same for an EstimatorSpec built in a graph).
Updated metrics, however they are updated, are accepted and report 2.15's
values.
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.mode_keys import ModeKeys

FIRST_PHRASE = r'^Please call update_state\(\.\.\.\) on the "mean" metric'


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(
        ({"x": np.ones((4, 1), np.float32)}, np.ones((4, 1), np.float32))
    ).batch(2)


def _model_fn_with(update):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable(
            "w", [1, 1], initializer=tf.compat.v1.constant_initializer(0.5)
        )
        prediction = tf.matmul(features["x"], w)
        loss = tf.reduce_mean(tf.square(prediction - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, tf.compat.v1.train.get_global_step()
        )
        metric = keras.metrics.Mean()
        update(metric, loss)
        return ke.EstimatorSpec(
            mode, loss=loss, train_op=train_op, eval_metric_ops={"my_mean": metric}
        )

    return model_fn


def test_a_never_updated_keras_metric_stops_train_with_2_15s_error(tmp_path):
    est = ke.Estimator(_model_fn_with(lambda metric, loss: None), str(tmp_path))
    with pytest.raises(ValueError, match=FIRST_PHRASE) as raised:
        est.train(_input_fn, steps=1)
    # Ours goes on to name the key and the fix.
    assert "eval_metric_ops['my_mean']" in str(raised.value)
    assert "update_state(...) on it inside model_fn" in str(raised.value)


def test_a_never_updated_keras_metric_is_refused_in_a_traced_spec():
    metric = keras.metrics.Mean()

    @tf.function
    def build():
        EstimatorSpec(
            ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"m": metric}
        )
        return 0

    # tf.function puts "in user code: ..." before the message.
    with pytest.raises(ValueError, match=FIRST_PHRASE[1:]):
        build()


@pytest.mark.parametrize(
    "update",
    [
        pytest.param(lambda m, loss: m.update_state(loss), id="update_state"),
        pytest.param(lambda m, loss: m(loss), id="called"),
    ],
)
def test_updated_keras_metrics_are_accepted(tmp_path, update):
    est = ke.Estimator(
        _model_fn_with(update), str(tmp_path), config=ke.RunConfig(tf_random_seed=1)
    )
    est.train(_input_fn, steps=1)
    results = est.evaluate(_input_fn)
    assert set(results) == {"loss", "my_mean", "global_step"}


def test_a_keras_metric_updated_only_inside_tf_cond_gets_2_15s_error(tmp_path):
    # 2.15 (its own run): ValueError 'eval_metric_ops with "my_mean:
    # AssignAddVariableOp_1" must be from the default graph'. Accepted, the
    # metric read 0.0 here (the cond's update never ran in evaluation), where
    # the loss it averaged was 0.16.
    def update(metric, loss):
        def add():
            metric.update_state(loss)
            return tf.constant(0)

        tf.cond(loss > -1.0, add, lambda: tf.constant(0))

    est = ke.Estimator(_model_fn_with(update), str(tmp_path))
    with pytest.raises(
        ValueError,
        match=r'^eval_metric_ops with "my_mean: .*" must be from the default graph',
    ) as raised:
        est.train(_input_fn, steps=1)
    assert "update_state(...) in model_fn itself" in str(raised.value)


def test_the_mean_of_an_updated_metric_is_the_mean_loss(tmp_path):
    # w = 0.5 then one SGD step of rate 0.1 on loss (0.5 - 1)^2: w = 0.6,
    # loss (0.6 - 1)^2 = 0.16 on each batch.
    est = ke.Estimator(
        _model_fn_with(lambda m, loss: m.update_state(loss)), str(tmp_path)
    )
    est.train(_input_fn, steps=1)
    results = est.evaluate(_input_fn)
    assert results["my_mean"] == pytest.approx(0.16, rel=1e-6)
    assert results["loss"] == pytest.approx(0.16, rel=1e-6)


def test_an_eager_spec_with_a_fresh_metric_is_accepted():
    # Nothing can tell eagerly whether the metric will be updated.
    metric = keras.metrics.Mean()
    spec = EstimatorSpec(
        ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"m": metric}
    )
    assert spec.eval_metric_ops["m"] is metric


def test_a_metric_made_outside_model_fn_is_refused_not_read_wrong(tmp_path):
    """2.15 stopped train() on it (RuntimeError 'Attempting to capture an EagerTensor').

    Taken, evaluate() reported the mean of the training losses (0.68) where
    the evaluation's loss was 0.1296: its variables were the model_fn's to
    neither reset nor update.
    """
    outside = keras.metrics.Mean()

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
        outside.update_state(loss)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, tf.compat.v1.train.get_global_step()
        )
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={"m": outside})

    estimator = ke.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match=r"eval_metric_ops\['m'\] is a Mean metric .* made outside model_fn"):
        estimator.train(_input_fn, steps=2)
