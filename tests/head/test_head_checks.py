"""Heads refuse malformed logits, labels, weights and loss_fns as 2.15 did.

A shape known while the step is built fails then, with 2.15's ValueError
(first phrase as 2.15's); a shape known only when the step runs fails it
with an assertion naming the shapes. The cases are those tf.estimator
2.15's head tests pin (binary_class_head_test, multi_class_head_test,
regression_head_test).
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

LOGITS_2X1 = np.array([[45.0], [41.0]], np.float32)
SEQUENCE_LOGITS = np.array([[[10.0], [-10.0]], [[12.0], [-12.0]]], np.float32)
SEQUENCE_LABELS = np.array([[[0], [0]], [[1], [1]]], np.float64)


def _unknown_shape(function, *arrays):
    """`function` traced with inputs whose shapes are unknown, then run."""
    signature = [tf.TensorSpec(None, tf.as_dtype(a.dtype)) for a in arrays]
    return tf.function(function, input_signature=signature)(*arrays)


# --- logits -----------------------------------------------------------------


def test_binary_predictions_refuse_two_logits_per_example():
    head = ke.BinaryClassHead()
    logits = np.array([[45.0, 44.0], [41.0, 42.0]], np.float32)
    with pytest.raises(ValueError, match=r"logits shape must be \[D0, D1, ... DN, logits_dim"):
        head.predictions(logits, ["probabilities"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="logits shape must be"):
        _unknown_shape(lambda x: head.predictions(x)["probabilities"], logits)


@pytest.mark.parametrize(
    "head, width",
    [(ke.MultiClassHead(3), 2), (ke.RegressionHead(label_dimension=3), 2),
     (ke.MultiLabelHead(2), 3)],
    ids=["multi_class", "regression", "multi_label"],
)
def test_every_head_refuses_logits_of_another_width(head, width):
    logits = np.zeros([2, width], np.float32)
    with pytest.raises(ValueError, match="logits shape must be"):
        head.predictions(logits)


def test_logits_of_rank_1_are_refused():
    with pytest.raises(ValueError, match="logits must have rank at least 2"):
        ke.BinaryClassHead().predictions(np.array([1.0, 2.0], np.float32))


def test_an_unknown_prediction_key_is_refused():
    with pytest.raises(ValueError, match="Prediction key must be in PredictionKeys"):
        ke.MultiClassHead(3).predictions(np.zeros([1, 3], np.float32), ["scores"])


# --- labels -----------------------------------------------------------------


def test_labels_of_another_width_are_refused_statically_and_at_run_time():
    head = ke.BinaryClassHead()
    labels = np.array([[45.0, 44.0], [41.0, 42.0]], np.float32)
    with pytest.raises(ValueError, match="Mismatched label shape"):
        head.loss(labels, LOGITS_2X1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"labels shape must be \[D0"):
        _unknown_shape(lambda y, x: head.loss(y, x), labels, LOGITS_2X1)


@pytest.mark.parametrize("logits_rows, labels_rows", [(2, 3), (3, 2)])
def test_labels_for_another_batch_are_refused(logits_rows, labels_rows):
    head = ke.BinaryClassHead()
    logits = np.zeros([logits_rows, 1], np.float32)
    labels = np.zeros([labels_rows, 1], np.float32)
    with pytest.raises(ValueError, match="labels shape"):
        head.loss(labels, logits)


def test_missing_or_sparse_labels_are_refused():
    head = ke.RegressionHead()
    with pytest.raises(ValueError, match="You must provide a labels Tensor. Given: None"):
        head.loss(None, LOGITS_2X1)
    sparse = tf.SparseTensor([[0, 0]], [1.0], [2, 1])
    with pytest.raises(ValueError, match="SparseTensor labels are not supported"):
        head.loss(sparse, LOGITS_2X1)


def test_multi_class_labels_must_be_integers():
    with pytest.raises(ValueError, match="Labels dtype should be integer"):
        ke.MultiClassHead(3).loss(np.array([[1.0]], np.float32), np.zeros([1, 3], np.float32))


def test_soft_binary_labels_outside_0_1_are_refused():
    # binary_class_head_test.test_float_labels_invalid_values
    head = ke.BinaryClassHead()
    labels = np.array([[1.2], [0.4]], np.float32)
    logits = np.array([[0.5], [-0.3]], np.float32)
    with pytest.raises(ValueError, match=r"Labels must be <= 2 - 1"):
        head.loss(labels, logits)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must be <= n_classes - 1"):
        tf.function(lambda: head.loss(labels, logits))()


# --- weights ----------------------------------------------------------------


def test_sequence_weights_of_the_wrong_inner_dimension_are_refused():
    head = ke.BinaryClassHead(weight_column="w")
    weights = np.array([[1.0], [2.0]], np.float32)  # logits are [2, 2, 1]
    with pytest.raises(ValueError, match="weights shape must be"):
        head.loss(SEQUENCE_LABELS, SEQUENCE_LOGITS, features={"w": weights})


def test_sequence_weights_of_the_wrong_outer_dimension_are_refused_also_at_run_time():
    head = ke.BinaryClassHead(weight_column="w")
    weights = np.array([[[1.0, 1.1], [1.5, 1.6]], [[2.0, 2.1], [2.5, 2.6]]], np.float32)
    with pytest.raises(ValueError, match="weights shape must be"):
        head.loss(SEQUENCE_LABELS, SEQUENCE_LOGITS, features={"w": weights})
    with pytest.raises(tf.errors.InvalidArgumentError, match="weights shape must be"):
        _unknown_shape(
            lambda w: head.loss(SEQUENCE_LABELS, SEQUENCE_LOGITS, features={"w": w}), weights
        )


def test_per_value_weights_are_a_regression_head_privilege():
    logits = np.zeros([2, 3], np.float32)
    weights = {"w": np.ones([2, 3], np.float32)}
    regression = ke.RegressionHead(label_dimension=3, weight_column="w")
    assert float(regression.loss(np.ones([2, 3], np.float32), logits, features=weights)) == 1.0
    with pytest.raises(ValueError, match=r"weights shape must be \[D0, D1, ... DN\] or"):
        ke.MultiClassHead(3, weight_column="w").loss(np.zeros([2, 1], np.int64), logits, weights)


def test_weights_that_are_not_numbers_are_refused():
    head = ke.RegressionHead(weight_column="w")
    with pytest.raises(ValueError, match="Weight column should be castable to float"):
        head.loss(LOGITS_2X1, LOGITS_2X1, features={"w": np.array([["a"], ["b"]])})


# --- loss_fn ----------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [ke.BinaryClassHead, lambda **kw: ke.MultiClassHead(3, **kw), ke.RegressionHead,
     lambda **kw: ke.MultiLabelHead(2, **kw)],
    ids=["binary", "multi_class", "regression", "multi_label"],
)
def test_loss_fn_arguments_are_checked_when_the_head_is_made(make):
    def no_labels(logits):
        return logits

    def no_logits(labels):
        return labels

    def extra(labels, logits, name=None):
        return logits

    with pytest.raises(ValueError, match=r"loss_fn must contain argument: labels\. Given"):
        make(loss_fn=no_labels)
    with pytest.raises(ValueError, match=r"loss_fn must contain argument: logits\. Given"):
        make(loss_fn=no_logits)
    with pytest.raises(ValueError, match=r"loss_fn has unexpected args: \['name'\]"):
        make(loss_fn=extra)
    make(loss_fn=lambda labels, logits, features: logits)
    make(loss_fn=lambda labels, logits, features, loss_reduction: logits)


def test_a_loss_fn_returning_another_shape_is_refused():
    head = ke.BinaryClassHead(loss_fn=lambda labels, logits: tf.constant([1.0, 2.0]))
    labels = np.array([[1], [0]], np.int64)
    logits = np.array([[-10.0], [10.0]], np.float32)
    with pytest.raises(ValueError, match=r"loss_fn must return Tensor of shape \[D0, D1, ... DN, 1\]"):
        head.loss(labels, logits)

    def flat_loss(labels, logits):
        return tf.reshape(logits, [-1])

    dynamic = ke.BinaryClassHead(loss_fn=flat_loss)
    with pytest.raises(tf.errors.InvalidArgumentError, match="loss_fn must return Tensor"):
        _unknown_shape(lambda y, x: dynamic.loss(y, x), labels, logits)


def test_a_regression_loss_fn_returns_one_loss_per_label_value():
    head = ke.RegressionHead(
        label_dimension=2, loss_fn=lambda labels, logits: tf.reduce_sum(logits, -1, keepdims=True)
    )
    with pytest.raises(ValueError, match=r"loss_fn must return Tensor of shape \[D0, D1, ... DN, 2\]"):
        head.loss(np.zeros([1, 2], np.float32), np.zeros([1, 2], np.float32))


def test_loss_fn_gets_features_and_processed_labels():
    # regression_head_test.test_eval_create_loss_loss_fn: features reach loss_fn.
    seen = {}

    def loss_fn(labels, logits, features):
        seen["labels"] = labels
        return tf.abs(labels - logits) * features["scale"]

    head = ke.BinaryClassHead(loss_fn=loss_fn)
    loss = head.loss(
        np.array([1, 0], np.int64), np.array([[0.25], [0.5]], np.float32),
        features={"scale": np.array([[2.0], [4.0]], np.float32)},
    )
    assert seen["labels"].dtype == tf.float32 and seen["labels"].shape == (2, 1)
    np.testing.assert_allclose(float(loss), (0.75 * 2 + 0.5 * 4) / 2, rtol=1e-6)


# --- loss_reduction -----------------------------------------------------------


def test_loss_reduction_auto_is_the_batch_mean_and_none_is_refused():
    # 2.15 accepted every tf.losses.Reduction but NONE; AUTO meant the mean.
    head = ke.RegressionHead(loss_reduction="auto")
    loss = head.loss(np.array([[43.0], [44.0]], np.float32), LOGITS_2X1)
    np.testing.assert_allclose(float(loss), ((43 - 45) ** 2 + (44 - 41) ** 2) / 2, rtol=1e-6)
    assert head.loss_reduction == "auto"
    with pytest.raises(ValueError, match="Invalid loss_reduction: none"):
        ke.BinaryClassHead(loss_reduction="none")
