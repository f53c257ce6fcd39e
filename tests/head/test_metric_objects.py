"""`update_metrics` returns Keras metrics for every key, as 2.15's heads did.

In 2.15 every eval metric of a head was a `tf.keras.metrics.Metric`
(`accuracy_baseline` a Mean reading `label/mean`'s state): it accumulates
over batches, resets, and reports `max(mean, 1 - mean)` of the weighted
label mean.
"""

import keras
import numpy as np
import pytest

import keras_estimator as ke

HEADS = {
    "binary": (lambda: ke.BinaryClassHead(weight_column="w", thresholds=[0.3]), 1, [[1], [0]]),
    "multi_class": (lambda: ke.MultiClassHead(3, weight_column="w"), 3, [[2], [0]]),
    "regression": (lambda: ke.RegressionHead(weight_column="w"), 1, [[1.0], [2.0]]),
    "multi_label": (lambda: ke.MultiLabelHead(2, weight_column="w"), 2, [[1, 0], [1, 1]]),
}


@pytest.mark.parametrize("kind", sorted(HEADS))
def test_every_eval_metric_is_a_keras_metric(kind):
    make, width, labels = HEADS[kind]
    head = make()
    logits = np.linspace(-1.0, 1.0, 2 * width, dtype=np.float32).reshape(2, width)
    features = {"w": np.array([[1.0], [2.0]], np.float32)}
    metrics = head.update_metrics(head.metrics([0.5]), features, logits, np.asarray(labels), [0.5])
    not_metrics = {k: type(v).__name__ for k, v in metrics.items()
                   if not isinstance(v, keras.metrics.Metric)}
    assert not not_metrics


def test_accuracy_baseline_accumulates_over_batches_and_resets():
    head = ke.BinaryClassHead(weight_column="w")
    metrics = head.metrics()
    baseline = metrics["accuracy_baseline"]
    batches = [
        (np.array([[1], [1], [0]]), np.array([[1.0], [1.0], [1.0]], np.float32)),
        (np.array([[0], [0]]), np.array([[2.0], [0.5]], np.float32)),
    ]
    for labels, weights in batches:
        head.update_metrics(metrics, {"w": weights}, np.zeros([len(labels), 1], np.float32), labels)
    # Weighted label mean 2 / 5.5: always predicting 0 is right 3.5 / 5.5 of the time.
    np.testing.assert_allclose(float(baseline.result()), 3.5 / 5.5, rtol=1e-6)
    np.testing.assert_allclose(
        float(metrics["label/mean"].result()), 2.0 / 5.5, rtol=1e-6
    )
    baseline.reset_state()
    assert float(baseline.result()) == 0.0
