"""Heads take sequence logits `[batch, time, n]`, as tf.estimator 2.15's did.

Expected numbers are those 2.15's head tests pin (binary_class_head_test,
multi_class_head_test and multi_head_test, `test_multi_dim_*`); more
sequence cases, recorded from 2.15, are in `test_heads_tf215.py`.
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

BINARY_LOGITS = np.array([[[10], [-10]], [[12], [-12]]], np.float32)
BINARY_LABELS = np.array([[[0], [0]], [[1], [1]]], np.float64)
WEIGHTS = np.array([[1.0, 1.5], [2.0, 2.5]], np.float32)


def test_binary_head_evaluates_sequences_as_2_15():
    head = ke.BinaryClassHead(weight_column="weights")
    features = {"weights": WEIGHTS}
    loss = head.loss(BINARY_LABELS, BINARY_LOGITS, features=features)
    # Weighted sum 1 * 10 + 2.5 * 12 = 40 over 4 steps (sigmoid of +-10, +-12).
    np.testing.assert_allclose(float(loss), 10.0, rtol=1e-4)
    metrics = head.update_metrics(head.metrics(), features, BINARY_LOGITS, BINARY_LABELS)
    total = WEIGHTS.sum()
    want = {
        "average_loss": 40.0 / total,
        "accuracy": (1.5 + 2.0) / total,
        "precision": 2.0 / 3.0,
        "recall": 2.0 / 4.5,
        "prediction/mean": (1.0 + 2.0) / total,
        "label/mean": 4.5 / total,
        "accuracy_baseline": 4.5 / total,
    }
    for key, value in want.items():
        np.testing.assert_allclose(float(metrics[key].result()), value, rtol=1e-4, err_msg=key)
    # 2.15's test pins these to 1e-2.
    np.testing.assert_allclose(float(metrics["auc"].result()), 0.5222, atol=1e-2)
    np.testing.assert_allclose(float(metrics["auc_precision_recall"].result()), 0.6582, atol=1e-2)


def test_multi_class_head_weighs_each_step():
    head = ke.MultiClassHead(3, weight_column="weights")
    logits = np.array([[[10, 0, 0], [12, 0, 0]], [[0, 10, 0], [0, 15, 0]]], np.float32)
    labels = np.array([[[0], [1]], [[1], [2]]], np.int64)
    loss = head.loss(labels, logits, features={"weights": WEIGHTS})
    # Unweighted [[0, 12], [0, 15]]: (1.5 * 12 + 2.5 * 15) / 4.
    np.testing.assert_allclose(float(loss), 13.875, rtol=1e-4)
    predictions = head.predictions(logits)
    assert predictions["class_ids"].shape == (2, 2, 1)
    assert predictions["probabilities"].shape == (2, 2, 3)


def test_multi_head_splits_sequence_logits_among_its_heads():
    head1 = ke.RegressionHead(label_dimension=2, name="head1")
    head2 = ke.RegressionHead(label_dimension=3, name="head2")
    multi = ke.MultiHead([head1, head2])
    logits = np.array(
        [[[-1.0, 1.0, 2.0, -2.0, 2.0], [-1.0, 1.0, 2.0, -2.0, 2.0]],
         [[-1.5, 1.5, -2.0, 2.0, -2.0], [-1.5, 1.5, -2.0, 2.0, -2.0]]],
        np.float32,
    )
    labels = {
        "head1": np.array([[[1.0, 0.0], [1.0, 0.0]], [[1.5, 1.5], [1.5, 1.5]]], np.float32),
        "head2": np.array(
            [[[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]], [[2.0, 2.0, 0.0], [2.0, 2.0, 0.0]]], np.float32
        ),
    }
    predictions = multi.predictions(logits)
    np.testing.assert_array_equal(predictions[("head1", "predictions")], logits[..., :2])
    np.testing.assert_array_equal(predictions[("head2", "predictions")], logits[..., 2:])
    loss = multi.loss(labels, logits, features={})
    np.testing.assert_allclose(float(loss), 3.5 + 74.0 / 12.0, rtol=1e-6)
    with pytest.raises(ValueError, match="Could not split logits"):
        multi.loss(labels, logits[..., :4], features={})


def test_an_estimator_evaluates_a_head_on_sequence_logits(tmp_path):
    head = ke.MultiClassHead(3, weight_column="weights")
    logits = np.array([[[10, 0, 0], [12, 0, 0]], [[0, 10, 0], [0, 15, 0]]], np.float32)
    labels = np.array([[[0], [1]], [[1], [2]]], np.int64)

    def model_fn(features, labels, mode):
        # Fixed [batch, time, 3] logits; one variable so there is a checkpoint.
        tf.compat.v1.get_variable("unused", [], initializer=tf.zeros_initializer())
        return head.create_estimator_spec(
            features=features, mode=mode, logits=features["logits"], labels=labels
        )

    def input_fn():
        features = {"logits": logits, "weights": WEIGHTS}
        return tf.data.Dataset.from_tensors((features, labels))

    estimator = ke.Estimator(model_fn, model_dir=str(tmp_path))
    metrics = estimator.evaluate(input_fn, steps=1)
    np.testing.assert_allclose(metrics["loss"], 13.875, rtol=1e-4)
    np.testing.assert_allclose(metrics["average_loss"], 55.5 / 7.0, rtol=1e-4)
    np.testing.assert_allclose(metrics["accuracy"], 3.0 / 7.0, rtol=1e-6)
