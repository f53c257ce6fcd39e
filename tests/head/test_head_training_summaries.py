"""A head's training summaries in model_dir, as tf.estimator 2.15 wrote them.

The numbers are 2.15's (TensorFlow 2.15.1, tensorflow-estimator 2.15.0), from
this same model_fn: zero-initialized weights `w` of a linear model, one
RegressionHead, GradientDescent at 0.1, regularization loss `sum(w * w) + 0.5`,
two steps with `save_summary_steps=1`.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke

X = np.random.RandomState(0).rand(32, 2).astype("float32")
Y = X.sum(1, keepdims=True)

# 2.15's model_dir: {step: {tag: simple_value}}.
TF215 = {
    None: {
        1: {"loss": 1.9550795555114746, "regularization_loss": 0.5},
        2: {"loss": 1.6222591400146484, "regularization_loss": 0.5423934459686279},
    },
    "h1": {
        1: {"loss": 1.9550795555114746, "loss/h1": 1.9550795555114746, "regularization_loss/h1": 0.5},
        2: {
            "loss": 1.6222591400146484,
            "loss/h1": 1.6222591400146484,
            "regularization_loss/h1": 0.5423934459686279,
        },
    },
}


@pytest.mark.parametrize("name", [None, "h1"])
def test_loss_and_regularization_loss_summaries_match_tf215(name, tmp_path):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.zeros_initializer())
        logits = tf.matmul(features["x"], w)

        def train_op_fn(loss):
            return tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
                loss, global_step=tf.compat.v1.train.get_global_step()
            )

        return ke.RegressionHead(name=name).create_estimator_spec(
            features,
            mode,
            logits,
            labels,
            train_op_fn=train_op_fn,
            regularization_losses=[tf.reduce_sum(w * w) + 0.5],
        )

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(8)

    model_dir = str(tmp_path)
    estimator = ke.Estimator(model_fn, model_dir=model_dir, config=ke.RunConfig(save_summary_steps=1))
    estimator.train(input_fn, steps=2)
    written: dict[int, dict[str, float]] = {}
    for path in sorted(glob.glob(os.path.join(model_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                assert value.WhichOneof("value") == "simple_value", value.tag
                written.setdefault(event.step, {})[value.tag] = value.simple_value
    assert sorted(written) == sorted(TF215[name])
    for step, values in TF215[name].items():
        assert sorted(written[step]) == sorted(values), step
        for tag, expected in values.items():
            np.testing.assert_allclose(written[step][tag], expected, rtol=1e-6, err_msg=tag)
