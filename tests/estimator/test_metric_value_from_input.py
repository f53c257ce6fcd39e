"""An eval_metric_ops value computed from the batch itself, not from a metric.

`(tf.reduce_max(logits), tf.no_op())` has no state to read after the loop.
tf.estimator 2.15 ran the value once more after the loop, pulling one more
batch (with `steps`) or stopping with OutOfRangeError (without). Here it
is the value of the last batch evaluated; it used to stop evaluate() with
TensorFlow's UnliftableError from inside the function pruning.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke


def _model_fn(features, labels, mode):
    logits = tf.reduce_sum(features["x"], axis=1, keepdims=True) * tf.Variable(1.0, name="w")
    loss = tf.reduce_mean(tf.square(logits - labels))
    step = tf.compat.v1.train.get_or_create_global_step()
    return ke.EstimatorSpec(
        mode,
        loss=loss,
        train_op=tf.compat.v1.assign_add(step, 1),
        eval_metric_ops={"max_logit": (tf.reduce_max(logits), tf.no_op())},
    )


@pytest.mark.parametrize("steps", [2, None])
def test_a_value_read_from_the_batch_is_the_last_batchs(tmp_path, steps):
    x = np.arange(32, dtype=np.float32).reshape(16, 2)
    y = np.zeros((16, 1), np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(4)

    estimator = ke.Estimator(_model_fn, str(tmp_path))
    estimator.train(input_fn, steps=1)
    results = estimator.evaluate(input_fn, steps=steps)
    last_batch = 2 - 1 if steps else 4 - 1
    expected = x[4 * last_batch : 4 * last_batch + 4].sum(axis=1).max()
    assert results["max_logit"] == pytest.approx(expected)
