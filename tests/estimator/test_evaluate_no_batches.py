"""evaluate() over an input of no batch returns 2.15's results.

tf.estimator 2.15 (reference venv) evaluated an empty input to each metric as
initialized and a loss of 0, beside the global step:

- a model_fn with v1 `metrics.mean` and `metrics.accuracy`, after one step:
  `{'acc': 0.0, 'loss': 0.0, 'mean_pred': 0.0, 'global_step': 1}`, with or
  without hooks;
- a LinearClassifier after two steps: accuracy, accuracy_baseline, auc,
  auc_precision_recall, average_loss, label/mean, loss, precision,
  prediction/mean and recall all 0.0, global_step 2.

Here such an evaluation returned the global step alone.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

X = np.arange(8, dtype=np.float32).reshape(8, 1)
Y = (X > 3).astype(np.float32)


def input_fn(rows):
    return lambda: tf.data.Dataset.from_tensor_slices(({"x": X[:rows]}, Y[:rows])).batch(4)


def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.ones_initializer())
    prediction = features["x"] * w
    loss = tf.reduce_mean(tf.square(prediction - labels))
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    metrics = {
        "mean_pred": tf.compat.v1.metrics.mean(prediction),
        "acc": tf.compat.v1.metrics.accuracy(labels, tf.round(prediction)),
    }
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


@pytest.mark.parametrize("hooks", [None, [ke.StopAtStepHook(last_step=100)]])
def test_a_model_fns_metrics_as_initialized_and_a_zero_loss(tmp_path, hooks):
    est = ke.Estimator(model_fn, str(tmp_path))
    est.train(input_fn(8), steps=1)
    with pytest.warns(UserWarning, match="made no steps"):
        results = est.evaluate(input_fn(0), hooks=hooks)
    assert results == {"acc": 0.0, "loss": 0.0, "mean_pred": 0.0, "global_step": 1}


def test_a_canned_estimators_metrics_as_initialized(tmp_path):
    est = ke.LinearClassifier([tf.feature_column.numeric_column("x")], model_dir=str(tmp_path))
    est.train(lambda: input_fn(8)().repeat(), steps=2)
    with pytest.warns(UserWarning, match="made no steps"):
        results = est.evaluate(input_fn(0))
    keys = [
        "accuracy",
        "accuracy_baseline",
        "auc",
        "auc_precision_recall",
        "average_loss",
        "label/mean",
        "loss",
        "precision",
        "prediction/mean",
        "recall",
    ]
    assert results == {**dict.fromkeys(keys, 0.0), "global_step": 2}
