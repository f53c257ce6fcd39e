"""Canned estimators evaluate soft labels and weights as tf.estimator 2.15 did.

Each test restores the same hand-written checkpoint 2.15's DNN tests use
(hidden_units=(2, 2); age 10 gives the logit -2.08) and compares
`evaluate()` with the numbers tf.estimator 2.15.0 returned for the same
checkpoint and input (run in the reference interpreter).
"""


import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from tests.canned._tf1_checkpoints import write_tf1_checkpoint

fc = tf.feature_column
ONE_LOGIT = (([[0.6, 0.5]], [0.1, -0.1]), ([[1.0, 0.8], [-0.8, -1.0]], [0.2, -0.2]),
             ([[-1.0], [1.0]], [0.3]))
TWO_LOGITS = ONE_LOGIT[:2] + (([[-1.0, 0.5], [1.0, 0.25]], [0.3, -0.1]),)


def _checkpoint(model_dir, weights_and_biases, step=100):
    """A DNN checkpoint under 2.15's variable names."""
    *hidden, (logits_kernel, logits_bias) = weights_and_biases
    values = {}
    for index, (kernel, bias) in enumerate(hidden):
        values[f"dnn/hiddenlayer_{index}/kernel"] = kernel
        values[f"dnn/hiddenlayer_{index}/bias"] = bias
    values["dnn/logits/kernel"] = logits_kernel
    values["dnn/logits/bias"] = logits_bias
    return write_tf1_checkpoint(model_dir, values, step)


def _assert_metrics(got, want):
    assert set(want) <= set(got), sorted(set(want) - set(got))
    for key, value in want.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-6, atol=1e-6, err_msg=key)


def test_dnn_classifier_evaluates_soft_labels_with_their_cross_entropy(tmp_path):
    estimator = ke.DNNClassifier(
        hidden_units=(2, 2),
        feature_columns=[fc.numeric_column("age")],
        model_dir=_checkpoint(tmp_path, ONE_LOGIT),
    )
    metrics = estimator.evaluate(
        lambda: ({"age": [[10.0], [10.0]]}, [[0.8], [0.4]]), steps=1
    )
    # tf.estimator 2.15.0 on the same checkpoint and input.
    _assert_metrics(metrics, {
        "loss": 1.365721, "average_loss": 1.365721, "accuracy": 0.0,
        "accuracy_baseline": 0.6, "label/mean": 0.6, "prediction/mean": 0.11105597,
        "global_step": 100,
    })


def test_dnn_regressor_applies_the_weight_columns_normalizer(tmp_path):
    estimator = ke.DNNRegressor(
        hidden_units=(2, 2),
        feature_columns=[fc.numeric_column("age")],
        weight_column=fc.numeric_column("w", normalizer_fn=lambda x: x + 1.0),
        model_dir=_checkpoint(tmp_path, ONE_LOGIT),
    )
    features = {"age": [[10.0], [10.0], [10.0]], "w": [[0.0], [-0.9], [0.5]]}
    metrics = estimator.evaluate(lambda: (features, [[1.0], [0.0], [2.0]]), steps=1)
    # 2.15: weights 1, .1, 1.5; loss (3.08^2 + .1 * 2.08^2 + 1.5 * 4.08^2) / 3.
    _assert_metrics(metrics, {
        "loss": 11.629546, "average_loss": 13.418707, "label/mean": 1.5384616,
        "prediction/mean": -2.0800002,
    })


def test_dnn_regressor_weighs_each_label_dimension(tmp_path):
    estimator = ke.DNNRegressor(
        hidden_units=(2, 2),
        feature_columns=[fc.numeric_column("age")],
        label_dimension=2,
        weight_column="w",
        model_dir=_checkpoint(tmp_path, TWO_LOGITS),
    )
    features = {"age": [[10.0], [3.0]], "w": [[1.0, 2.0], [0.5, 3.0]]}
    metrics = estimator.evaluate(lambda: (features, [[1.0, 0.0], [0.0, 2.0]]), steps=1)
    _assert_metrics(metrics, {
        "loss": 4.9675245, "average_loss": 3.0569382, "label/mean": 1.0769231,
        "prediction/mean": 0.14307691,
    })


def test_a_weight_column_of_another_kind_is_refused(tmp_path):
    estimator = ke.DNNRegressor(
        hidden_units=(2, 2),
        feature_columns=[fc.numeric_column("age")],
        weight_column=fc.categorical_column_with_identity("w", 3),
        model_dir=_checkpoint(tmp_path, ONE_LOGIT),
    )
    features = {"age": [[10.0]], "w": [[1]]}
    with pytest.raises(TypeError, match="Weight column must be either a string or NumericColumn"):
        estimator.evaluate(lambda: (features, [[1.0]]), steps=1)
