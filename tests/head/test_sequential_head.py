"""The per-step head of sequence estimators gives tf.estimator 2.15's numbers.

`SequentialHeadWrapper` is what `RNNClassifier(return_sequences=True)` and
`RNNEstimator` use; the cases and numbers are 2.15's
`sequential_head_test` (`test_loss_reduction`, `test_metrics_computation`,
`test_predictions`, `test_metrics`), with masks and weights given as numpy
arrays or Python lists as input_fns give them.
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.head.sequential_head import SequentialHeadWrapper


def test_loss_over_the_masked_steps():
    head = SequentialHeadWrapper(
        ke.MultiClassHead(3, weight_column="weights"), "sequence_mask", "weights"
    )
    features = {
        "weights": tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [0.5, 0.2, 0.3], [2, 2]),
        "sequence_mask": np.array([[1, 1], [1, 0]]),
    }
    logits = np.array(
        [[[2.0, 3.0, 4.0], [5.0, -0.5, 0.0]], [[-1.0, 2.0, 0.5], [1.0, 0.5, 2.0]]], np.float32
    )
    labels = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [0, 1, 2], [2, 2])
    # (0.5 * 2.40 + 0.2 * 5.41 + 0.3 * 1.74) / 3 steps
    np.testing.assert_allclose(float(head.loss(labels, logits, features)), 0.942783, atol=1e-6)


def test_metrics_over_the_masked_steps():
    head = SequentialHeadWrapper(
        ke.BinaryClassHead(weight_column="weights"), "sequence_mask", "weights"
    )
    features = {
        "sequence_mask": np.array([[1, 1, 1], [1, 0, 0]]),
        "weights": np.array([[2, 5, 1], [2, 100, 100]]),
    }
    logits = np.array([[-101, 102, -103], [104, 100, 100]], np.float32)
    labels = tf.SparseTensor([[0, 0], [0, 1], [0, 2], [1, 0]], [1, 1, 1, 1], [2, 3])
    metrics = head.update_metrics(head.metrics([100.0]), features, logits, labels, [100.0])
    want = {
        "average_loss": 30.5, "accuracy": 0.7, "prediction/mean": 0.7, "label/mean": 1.0,
        "regularization_loss": 100.0, "precision": 1.0, "recall": 0.7,
        "accuracy_baseline": 1.0, "auc": 0.0, "auc_precision_recall": 1.0,
    }
    assert sorted(metrics) == sorted(want)
    for key, value in want.items():
        np.testing.assert_allclose(float(metrics[key].result()), value, atol=1e-6, err_msg=key)


def test_predictions_keep_the_time_axis():
    head = SequentialHeadWrapper(ke.BinaryClassHead(), "sequence_mask")
    logits = [[[0.3], [-0.4]], [[0.2], [0.2]]]
    predictions = head.predictions(logits, keys=["logits", "logistic"])
    assert sorted(predictions) == ["logistic", "logits"]
    np.testing.assert_allclose(predictions["logits"], logits)
    np.testing.assert_allclose(
        predictions["logistic"], [[[0.574443], [0.401312]], [[0.549834], [0.549834]]], atol=1e-6
    )
    metrics = SequentialHeadWrapper(ke.BinaryClassHead(), "mask").metrics(2.5)
    assert "accuracy" in metrics and "regularization_loss" in metrics


def test_properties_and_bad_arguments_follow_2_15():
    static = ke.BinaryClassHead(loss_reduction="sum", name="a_static_head")
    head = SequentialHeadWrapper(static, "a_sequence_mask_col")
    assert head.name == "a_static_head_sequential"
    assert head.static_head is static
    assert head.logits_dimension == 1 and head.loss_reduction == "sum"
    assert head.input_sequence_mask_key == "a_sequence_mask_col"
    assert SequentialHeadWrapper(ke.BinaryClassHead()).name is None
    with pytest.raises(TypeError, match="`sequence_mask` column must be a string"):
        SequentialHeadWrapper(static, 1)
    with pytest.raises(TypeError, match="`feature_columns` must be either a string or an iterable"):
        SequentialHeadWrapper(static, "mask", 1)
    with pytest.raises(TypeError, match="Column must a string"):
        SequentialHeadWrapper(static, "mask", ["w", 1])
    multi = ke.MultiHead([ke.BinaryClassHead(name="a"), ke.RegressionHead(name="b")])
    with pytest.raises(ValueError, match="`MultiHead` is not supported with `SequentialHeadWrapper`"):
        SequentialHeadWrapper(multi, "mask")
