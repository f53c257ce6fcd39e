"""`update_metrics` returns Keras metrics for every key, as 2.15's heads did.

In 2.15 every eval metric of a head was a `tf.keras.metrics.Metric`
(`accuracy_baseline` a Mean reading `label/mean`'s state): it accumulates
over batches, resets, and reports `max(mean, 1 - mean)` of the weighted
label mean. In a traced step (2.15's graph mode) an `EstimatorSpec` holds
each Keras metric as a `(value_tensor, update_op)` pair, so a model_fn can
unpack a head's metrics and derive its own from them.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

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


def _model_fn(features, labels, mode):
    """A head over logits x * w; eval also derives a metric from the head's."""
    weight = tf.compat.v1.get_variable("w", [], initializer=tf.ones_initializer())
    head = ke.MultiClassHead(3)
    spec = head.create_estimator_spec(
        features=features,
        mode=mode,
        logits=features["x"] * weight,
        labels=labels,
        train_op_fn=lambda loss: tf.compat.v1.assign_add(
            tf.compat.v1.train.get_global_step(), 1
        ),
    )
    if mode != ke.ModeKeys.EVAL:
        return spec
    # What a 2.15 model_fn could do: the head's metrics are (value, update_op).
    value, update_op = spec.eval_metric_ops["accuracy"]
    metrics = dict(spec.eval_metric_ops, error_rate=(1.0 - value, update_op))
    return spec._replace(eval_metric_ops=metrics)


def test_a_traced_spec_holds_keras_metrics_as_value_and_update_op(tmp_path):
    logits = np.array([[3.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 3.0], [3.0, 0.0, 0.0]])
    labels = np.array([[0], [1], [0], [2]])

    def input_fn():
        features = {"x": logits.astype(np.float32)}
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(2)

    estimator = ke.Estimator(_model_fn, model_dir=str(tmp_path))
    estimator.train(input_fn, steps=1)
    metrics = estimator.evaluate(input_fn, steps=2)
    # Two batches: right, right | wrong, wrong.
    np.testing.assert_allclose(metrics["accuracy"], 0.5, rtol=1e-6)
    np.testing.assert_allclose(metrics["error_rate"], 0.5, rtol=1e-6)
    # Metric state is evaluation state: not in the checkpoint.
    names = [name for name, _ in tf.train.list_variables(str(tmp_path))]
    assert sorted(names) == ["global_step", "w"]


def test_an_eager_spec_keeps_keras_metrics():
    metric = keras.metrics.Mean()
    spec = ke.EstimatorSpec(
        ke.ModeKeys.EVAL, loss=tf.constant(1.0), eval_metric_ops={"m": metric}
    )
    assert spec.eval_metric_ops["m"] is metric
