"""Heads: losses, predictions and errors (2.15 values: tests/canned/test_dnn_compat.py)."""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke

LOGITS3 = np.array([[1.0, 2.0, 0.5], [0.1, -1.0, 3.0], [2.0, 2.0, 2.0]], np.float32)


def _softmax_ce(logits, labels):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -log_probs[np.arange(len(labels)), labels]


@given(
    batch=st.integers(1, 6),
    reduction=st.sampled_from(["sum_over_batch_size", "sum"]),
    seed=st.integers(0, 1000),
)
def test_multi_class_loss_is_the_weighted_reduced_cross_entropy(batch, reduction, seed):
    rng = np.random.RandomState(seed)
    logits = rng.normal(size=(batch, 4)).astype(np.float32)
    labels = rng.randint(0, 4, size=(batch, 1))
    weights = rng.uniform(0.5, 2.0, size=(batch, 1)).astype(np.float32)
    head = ke.MultiClassHead(4, weight_column="w", loss_reduction=reduction)
    loss = head.loss(labels, logits, features={"w": weights}).numpy()
    weighted = (_softmax_ce(logits, labels[:, 0]) * weights[:, 0]).sum()
    want = weighted if reduction == "sum" else weighted / batch
    np.testing.assert_allclose(loss, want, rtol=1e-5)


def test_multi_class_predictions_have_2_15s_keys_and_values():
    head = ke.MultiClassHead(3, label_vocabulary=["a", "b", "c"])
    predictions = {k: v.numpy() for k, v in head.predictions(LOGITS3).items()}
    assert sorted(predictions) == [
        "all_class_ids", "all_classes", "class_ids", "classes", "logits", "probabilities",
    ]
    np.testing.assert_array_equal(predictions["class_ids"], [[1], [2], [0]])
    np.testing.assert_array_equal(predictions["classes"], [[b"b"], [b"c"], [b"a"]])
    np.testing.assert_allclose(predictions["probabilities"].sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(predictions["all_classes"][0], [b"a", b"b", b"c"])


def test_binary_head_predictions_and_loss():
    head = ke.BinaryClassHead()
    logits = np.array([[-1.0], [0.5]], np.float32)
    predictions = {k: v.numpy() for k, v in head.predictions(logits).items()}
    np.testing.assert_allclose(predictions["logistic"], 1 / (1 + np.exp(-logits)), rtol=1e-6)
    np.testing.assert_array_equal(predictions["class_ids"], [[0], [1]])
    loss = head.loss(np.array([[0], [1]]), logits).numpy()
    want = np.mean(np.log1p(np.exp(-np.array([1.0, 0.5]))))
    np.testing.assert_allclose(loss, want, rtol=1e-6)


def test_regression_heads_losses():
    labels = np.array([[1.0], [3.0]], np.float32)
    logits = np.array([[2.0], [1.0]], np.float32)
    assert ke.RegressionHead().loss(labels, logits).numpy() == pytest.approx(2.5)
    poisson = ke.PoissonRegressionHead(compute_full_loss=False)
    want = np.mean(np.exp(logits) - labels * logits)
    assert poisson.loss(labels, logits).numpy() == pytest.approx(want, rel=1e-6)
    predictions = poisson.predictions(logits)
    np.testing.assert_allclose(predictions["predictions"], np.exp(logits), rtol=1e-6)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: ke.MultiClassHead(2), "n_classes must be > 2: 2"),
        (lambda: ke.MultiClassHead(3, label_vocabulary=["a", "b"]), "3 distinct"),
        (lambda: ke.BinaryClassHead(thresholds=[1.5]), r"\(0, 1\)"),
        (lambda: ke.RegressionHead(label_dimension=0), "label_dimension"),
        (lambda: ke.RegressionHead(loss_reduction="mean"), "loss_reduction"),
    ],
)
def test_bad_head_arguments_are_refused(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_labels_out_of_range_fail_with_the_range():
    head = ke.MultiClassHead(3)
    with pytest.raises(ValueError, match=r"Labels must be <= 3 - 1"):
        head.loss(np.array([[3]]), LOGITS3[:1])
    with pytest.raises(ValueError, match=r"Labels must be >= 0"):
        head.loss(np.array([[-1]]), LOGITS3[:1])
    traced = tf.function(lambda labels: head.loss(labels, LOGITS3[:1]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Labels must be <= n_classes - 1"):
        traced(tf.constant([[3]]))


def test_string_labels_need_a_vocabulary():
    with pytest.raises(ValueError, match="label_vocabulary"):
        ke.MultiClassHead(3).loss(np.array([[b"a"]]), LOGITS3[:1])
