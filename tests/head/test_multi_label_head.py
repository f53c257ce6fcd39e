"""MultiLabelHead: losses, labels, metrics and signatures as tf.estimator 2.15's.

The frozen figures were computed with tf.estimator 2.15's MultiLabelHead on
the same inputs (`benchmarks/.ref-venv`). 2.15's
DNNEstimator(head=MultiLabelHead(n_classes=3)) model_dir is restored, trained
on and exported in `tests/canned/test_premade_fixtures.py`.
"""


import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

from keras_estimator._src.head.multi_label_head import MultiLabelHead

FIXTURE = "dnn_estimator_multilabel"


def _sigmoid_ce(logits, labels):
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


def _inputs_2_15():
    """The inputs the frozen 2.15 figures below were computed on."""
    rng = np.random.RandomState(3)
    logits = rng.normal(size=(7, 4)).astype(np.float32) * 2
    labels = rng.randint(0, 2, size=(7, 4)).astype(np.int64)
    weights = rng.uniform(0.2, 2, size=(7, 1)).astype(np.float32)
    return logits, labels, weights


# tf.estimator 2.15: MultiLabelHead(4, weight_column="w", thresholds=[0.3, 0.5],
# classes_for_class_based_metrics=[0, 2]) with regularization_losses=[0.25].
METRICS_2_15 = {
    "average_loss": 0.9868938,
    "auc": 0.5435024,
    "auc_precision_recall": 0.5055564,
    "regularization_loss": 0.25,
    "accuracy/positive_threshold_0.3": 0.5408936,
    "precision/positive_threshold_0.3": 0.5405583,
    "recall/positive_threshold_0.3": 0.6964158,
    "accuracy/positive_threshold_0.5": 0.5272289,
    "precision/positive_threshold_0.5": 0.5574459,
    "recall/positive_threshold_0.5": 0.3777294,
    "probability_mean/class0": 0.4509385,
    "auc/class0": 0.4024897,
    "auc_precision_recall/class0": 0.4564386,
    "probability_mean/class2": 0.5474519,
    "auc/class2": 0.7254411,
    "auc_precision_recall/class2": 0.3833012,
}
LOSS_2_15 = 0.9906648397445679


@given(
    batch=st.integers(1, 6),
    n_classes=st.integers(2, 5),
    reduction=st.sampled_from(["sum_over_batch_size", "sum"]),
    seed=st.integers(0, 1000),
)
def test_loss_is_the_weighted_reduced_mean_over_classes(batch, n_classes, reduction, seed):
    rng = np.random.RandomState(seed)
    logits = rng.normal(scale=3.0, size=(batch, n_classes)).astype(np.float32)
    labels = rng.randint(0, 2, size=(batch, n_classes))
    weights = rng.uniform(0.5, 2.0, size=(batch,)).astype(np.float32)
    head = MultiLabelHead(n_classes, weight_column="w", loss_reduction=reduction)
    loss = head.loss(labels, logits, features={"w": weights}).numpy()
    per_example = _sigmoid_ce(logits.astype(np.float64), labels).mean(axis=1)
    weighted = (per_example * weights).sum()
    want = weighted if reduction == "sum" else weighted / batch
    np.testing.assert_allclose(loss, want, rtol=1e-5)


@given(n_classes=st.integers(2, 5), seed=st.integers(0, 1000))
def test_sparse_ids_and_names_give_the_multi_hot_loss(n_classes, seed):
    rng = np.random.RandomState(seed)
    batch = 4
    logits = rng.normal(size=(batch, n_classes)).astype(np.float32)
    multi_hot = rng.randint(0, 2, size=(batch, n_classes))
    indices, ids = [], []
    for row in range(batch):
        for position, class_id in enumerate(np.flatnonzero(multi_hot[row])):
            indices.append([row, position])
            ids.append(class_id)
    dense_shape = [batch, max(1, int(multi_hot.sum(axis=1).max()))]
    sparse_ids = tf.SparseTensor(
        np.array(indices, np.int64).reshape(-1, 2), np.array(ids, np.int64), dense_shape
    )
    names = [f"c{i}" for i in range(n_classes)]
    sparse_names = tf.SparseTensor(
        sparse_ids.indices, tf.constant([names[i] for i in ids], tf.string), dense_shape
    )
    want = MultiLabelHead(n_classes).loss(multi_hot, logits).numpy()
    got_ids = MultiLabelHead(n_classes).loss(sparse_ids, logits).numpy()
    got_names = MultiLabelHead(n_classes, label_vocabulary=names).loss(sparse_names, logits)
    np.testing.assert_allclose(got_ids, want, rtol=1e-6)
    np.testing.assert_allclose(got_names.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("name", [None, "tags"])
def test_metrics_are_2_15s(name):
    logits, labels, weights = _inputs_2_15()
    head = MultiLabelHead(
        4,
        weight_column="w",
        thresholds=[0.3, 0.5],
        classes_for_class_based_metrics=[0, 2],
        name=name,
    )
    features = {"w": weights}
    regularization = [tf.constant(0.25)]
    loss = head.loss(labels, logits, features=features)
    np.testing.assert_allclose(loss.numpy(), LOSS_2_15, rtol=1e-6)
    metrics = head.update_metrics(
        head.metrics(regularization), features, logits, labels, regularization
    )
    suffix = f"/{name}" if name else ""
    assert sorted(metrics) == sorted(k + suffix for k in METRICS_2_15)
    for key, value in METRICS_2_15.items():
        np.testing.assert_allclose(
            metrics[key + suffix].result().numpy(), value, rtol=1e-5, err_msg=key
        )


def test_vocabulary_metrics_and_sparse_losses_are_2_15s():
    logits = _inputs_2_15()[0][:3]
    head = MultiLabelHead(
        4,
        label_vocabulary=["a", "b", "c", "d"],
        classes_for_class_based_metrics=["b"],
        loss_reduction="sum",
    )
    names = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], ["b", "d", "a"], [3, 2])
    np.testing.assert_allclose(head.loss(names, logits).numpy(), 3.3194010, rtol=1e-6)
    metrics = head.update_metrics(head.metrics(), {}, logits, names)
    want = {
        "average_loss": 1.106467,
        "auc": 0.4814815,
        "auc_precision_recall": 0.2455122,
        "probability_mean/b": 0.4376909,
        "auc/b": 1.0,
        "auc_precision_recall/b": 1.0,
    }
    assert sorted(metrics) == sorted(want)
    for key, value in want.items():
        np.testing.assert_allclose(metrics[key].result().numpy(), value, rtol=1e-5)
    ids = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], np.array([3, 0, 2], np.int64), [3, 2])
    np.testing.assert_allclose(MultiLabelHead(4).loss(ids, logits).numpy(), 1.2319371, rtol=1e-6)


def test_predictions_and_signatures_have_2_15s_keys():
    head = MultiLabelHead(3, label_vocabulary=["x", "y", "z"])
    logits = np.array([[-1.0, 0.0, 2.0], [0.5, -0.5, 1.0]], np.float32)
    predictions = head.predictions(logits)
    assert sorted(predictions) == ["classes", "logits", "probabilities"]
    np.testing.assert_allclose(predictions["probabilities"], 1 / (1 + np.exp(-logits)), 1e-6)
    np.testing.assert_array_equal(predictions["classes"], [[b"x", b"y", b"z"]] * 2)
    assert sorted(head.predictions(logits, ["logits"])) == ["logits"]
    outputs = head.export_outputs(predictions)
    assert sorted(outputs) == ["classification", "predict", "serving_default"]
    assert sorted(outputs["predict"].outputs) == ["classes", "logits", "probabilities"]
    unnamed = MultiLabelHead(2).predictions(logits[:, :2])
    np.testing.assert_array_equal(unnamed["classes"], [[b"0", b"1"]] * 2)


def test_loss_fn_gets_multi_hot_labels_and_features():
    seen = {}

    def loss_fn(labels, logits, features):
        seen["labels"] = labels
        return tf.reduce_sum(logits * tf.cast(labels, tf.float32), -1, keepdims=True) * features["s"]

    head = MultiLabelHead(2, label_vocabulary=["a", "b"], loss_fn=loss_fn, loss_reduction="sum")
    labels = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], ["b", "a", "b"], [2, 2])
    logits = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    loss = head.loss(labels, logits, features={"s": np.array([[1.0], [10.0]], np.float32)})
    np.testing.assert_array_equal(seen["labels"], [[0, 1], [1, 1]])
    assert loss.numpy() == pytest.approx(2.0 + 70.0)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: MultiLabelHead(1), "n_classes must be > 1 for multi-label classification"),
        (lambda: MultiLabelHead(3, thresholds=[0.5, 1.0]), r"\(0, 1\).*1\.0"),
        (lambda: MultiLabelHead(3, label_vocabulary=["a", "b"]), r"must be n_classes \(3\)"),
        (lambda: MultiLabelHead(3, classes_for_class_based_metrics=[3]), r"\[0, 2\]"),
        (lambda: MultiLabelHead(3, classes_for_class_based_metrics=["a"]), "label_vocabulary"),
        (lambda: MultiLabelHead(3, loss_reduction="mean"), "loss_reduction"),
        (lambda: MultiLabelHead(3, loss_fn=lambda y, x: x), "loss_fn must contain argument: labels"),
    ],
)
def test_bad_arguments_are_refused(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_labels_and_logits_are_refused():
    head = MultiLabelHead(3)
    logits = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="Mismatched label shape. Expected labels dimension=3"):
        head.loss(np.array([[1, 0], [0, 1]]), logits)
    with pytest.raises(ValueError, match=r"logits shape must be \[D0, D1, ... DN, logits_dim"):
        head.loss(np.array([[1, 0, 0]]), np.zeros((1, 2), np.float32))
    with pytest.raises(ValueError, match=r"integer indicator Tensor with values in \[0, 1\]"):
        head.loss(np.array([[2, 0, 0], [0, 1, 0]]), logits)
    with pytest.raises(ValueError, match=r"integer SparseTensor with values in \[0, 3\)"):
        head.loss(tf.SparseTensor([[0, 0]], np.array([3], np.int64), [2, 1]), logits)
    with pytest.raises(ValueError, match="no label_vocabulary"):
        head.loss(tf.SparseTensor([[0, 0]], ["a"], [2, 1]), logits)
    with pytest.raises(ValueError, match="You must provide a labels Tensor. Given: None"):
        head.loss(None, logits)
