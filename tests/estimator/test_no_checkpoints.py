"""With checkpoints turned off, calls go on from the values in memory.

`RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None)` saves
no checkpoint. 2.15 then started each call from initialized variables (a
second train() from step 0, evaluate() on the initial weights: loss 1.0,
w 0, global_step 0 for the model below, in the reference venv). Here the
Estimator's variables stay in memory between calls: a documented
difference (docs/differences.md), pinned here.
"""

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke


def _model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
    prediction = tf.matmul(features["x"], w)
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"p": prediction})
    loss = tf.reduce_mean(tf.square(prediction - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metric_ops={"w": tf.compat.v1.metrics.mean(w)}
    )


_ONES = np.ones((8, 1), np.float32)


def test_calls_go_on_from_the_values_in_memory(tmp_path):
    est = ke.Estimator(
        _model_fn,
        model_dir=str(tmp_path),
        config=ke.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None),
    )
    train_input = lambda: tf.data.Dataset.from_tensor_slices(({"x": _ONES}, _ONES)).repeat().batch(2)  # noqa: E731
    eval_input = lambda: tf.data.Dataset.from_tensor_slices(({"x": _ONES}, _ONES)).batch(2)  # noqa: E731
    est.train(train_input, steps=3)
    assert est.latest_checkpoint() is None
    first = est.evaluate(eval_input)
    assert first["global_step"] == 3
    assert first["w"] == pytest.approx(0.488)  # 1 - 0.8 ** 3
    est.train(train_input, steps=3)
    second = est.evaluate(eval_input)
    assert second["global_step"] == 6
    assert second["w"] == pytest.approx(1 - 0.8**6, abs=1e-6)
