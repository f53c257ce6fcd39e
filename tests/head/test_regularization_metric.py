"""Given regularization losses, a head reports `regularization_loss`, as in 2.15.

2.15's `test_eval_with_regularization_losses` (every head's test file):
regularization losses [1.5, 0.5] add 2.0 to the loss, and the eval metrics
hold their sum under `regularization_loss` (`regularization_loss/<name>` for
a named head).
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

REGULARIZATION = [1.5, 0.5]
CASES = {
    "binary": (lambda **kw: ke.BinaryClassHead(**kw), [[0.5], [-0.3]], [[1], [0]]),
    "multi_class": (
        lambda **kw: ke.MultiClassHead(3, **kw), [[10.0, 0.0, 0.0], [0.0, 10.0, 0.0]], [[2], [1]]
    ),
    "regression": (lambda **kw: ke.RegressionHead(**kw), [[45.0], [41.0]], [[43.0], [44.0]]),
    "multi_label": (
        lambda **kw: ke.MultiLabelHead(2, **kw), [[-1.0, 1.0], [1.5, -1.5]], [[1, 0], [1, 1]]
    ),
}


@pytest.mark.parametrize("kind", sorted(CASES))
@pytest.mark.parametrize("name", [None, "task"])
def test_regularization_loss_is_a_metric_and_part_of_the_loss(kind, name):
    make, logits, labels = CASES[kind]
    head = make(name=name)
    logits, labels = np.asarray(logits, np.float32), np.asarray(labels)
    key = f"regularization_loss/{name}" if name else "regularization_loss"
    assert key not in head.metrics()
    metrics = head.update_metrics(
        head.metrics(REGULARIZATION), {}, logits, labels, REGULARIZATION
    )
    assert isinstance(metrics[key], keras.metrics.Metric)
    np.testing.assert_allclose(float(metrics[key].result()), 2.0, rtol=1e-6)
    unregularized = float(head.loss(labels, logits))
    regularized = float(head.loss(labels, logits, regularization_losses=REGULARIZATION))
    np.testing.assert_allclose(regularized, unregularized + 2.0, rtol=1e-6)


def test_an_estimator_reports_the_regularization_loss(tmp_path):
    head = ke.RegressionHead()

    def model_fn(features, labels, mode):
        tf.compat.v1.get_variable("unused", [], initializer=tf.zeros_initializer())
        return head.create_estimator_spec(
            features=features,
            mode=mode,
            logits=features["logits"],
            labels=labels,
            regularization_losses=[tf.constant(1.5), tf.constant(0.5)],
        )

    def input_fn():
        features = {"logits": np.array([[45.0], [41.0]], np.float32)}
        return tf.data.Dataset.from_tensors((features, np.array([[43.0], [44.0]], np.float32)))

    metrics = ke.Estimator(model_fn, model_dir=str(tmp_path)).evaluate(input_fn, steps=1)
    np.testing.assert_allclose(metrics["regularization_loss"], 2.0, rtol=1e-6)
    np.testing.assert_allclose(metrics["average_loss"], (4.0 + 9.0) / 2, rtol=1e-6)
    np.testing.assert_allclose(metrics["loss"], 6.5 + 2.0, rtol=1e-6)
