"""LoggingTensorHook given a list of tensors tags them as tf.estimator 2.15 did.

2.15 logged each tensor of a list under its text, `Tensor("Identity:0",
shape=(2, 1), dtype=float32) = ...`, and the model_fn's ops had the default
names of a fresh graph: the first `tf.identity` is "Identity". The lines
below are those of 2.15's run of TensorFlow's "LoggingTensorHook and
StopAtStepHook" migration guide (tests/programs/migrate_logging_stop_hook.py),
here with zero initial weights and variables of
`tf.compat.v1.get_variable` for the guide's `tf1.layers.Dense`.
"""

import logging
import re

import tensorflow as tf

import keras_estimator as ke

FEATURES = [[1.0, 1.5], [2.0, 2.5], [3.0, 3.5]]
LABELS = [[0.3], [0.5], [0.7]]


def _input_fn():
    return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(1)


def _model_fn(features, labels, mode):
    zeros = tf.compat.v1.zeros_initializer()
    kernel = tf.compat.v1.get_variable("kernel", [2, 1], initializer=zeros)
    bias = tf.compat.v1.get_variable("bias", [1], initializer=zeros)
    logits = tf.matmul(features, kernel) + bias
    loss = tf.compat.v1.losses.mean_squared_error(labels=labels, predictions=logits)
    train_op = tf.compat.v1.train.AdagradOptimizer(0.05).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    hook = ke.LoggingTensorHook(
        tensors=[tf.identity(kernel), tf.identity(bias)],
        every_n_iter=1,
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[hook])


def test_a_list_of_tensors_is_tagged_by_their_text(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="keras_estimator")
    ke.Estimator(_model_fn, model_dir=str(tmp_path)).train(_input_fn, steps=2)
    lines = [r.getMessage() for r in caplog.records if "Identity" in r.getMessage()]
    assert len(lines) == 2
    for line in lines:
        tags = re.findall(r"(Tensor\(.*?\)) = ", line)
        assert tags == [
            'Tensor("Identity:0", shape=(2, 1), dtype=float32)',
            'Tensor("Identity_1:0", shape=(1,), dtype=float32)',
        ]


def test_names_given_in_a_list_stay_their_own_tags(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="keras_estimator")

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [2, 1])
        loss = tf.reduce_mean(tf.matmul(features, w) - labels)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.0).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        tf.identity(loss, name="named")
        hook = ke.LoggingTensorHook(["named:0"], every_n_iter=1)
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[hook])

    ke.Estimator(model_fn, model_dir=str(tmp_path)).train(_input_fn, steps=1)
    assert [r.getMessage().split(" = ")[0] for r in caplog.records
            if r.getMessage().startswith("named")] == ["named:0"]
