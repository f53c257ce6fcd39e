"""A tiny model_fn and data shared by the tests."""

import keras
import numpy as np
import tensorflow as tf

import keras_estimator as ke
from keras_estimator.compat import layers


def make_data(num_examples=64, num_features=4, num_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(num_examples, num_features)).astype("float32")
    w = rng.normal(size=(num_features, num_classes))
    y = np.argmax(x @ w, axis=1).astype("int32")
    return x, y


def mlp_model_fn(features, labels, mode, params):
    """An MLP with v1 losses/metrics/optimizer, sizes from params."""
    net = features["x"]
    for units in params.get("hidden", [8]):
        net = layers.dense(net, units, activation=tf.nn.relu)
    logits = layers.dense(net, params.get("classes", 3))
    classes = tf.argmax(logits, 1)
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"logits": logits, "classes": classes})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == ke.ModeKeys.EVAL:
        return ke.EstimatorSpec(
            mode,
            loss=loss,
            eval_metric_ops={"accuracy": tf.compat.v1.metrics.accuracy(labels, classes)},
        )
    name = params.get("optimizer", "adam")
    rate = params.get("learning_rate", 0.05)
    optimizer = {
        "adam": tf.compat.v1.train.AdamOptimizer,
        "sgd": tf.compat.v1.train.GradientDescentOptimizer,
        "adagrad": tf.compat.v1.train.AdagradOptimizer,
    }[name](rate)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def write_forced_summary(loss):
    """A summary of a positive `loss` written inside tf.cond under a record_if of
    its own: the step cannot hold it back, so each compiled function traces the
    step itself (and runs every stateful op the model_fn built)."""
    with tf.summary.record_if(True):
        tf.cond(
            loss > 0,
            lambda: tf.summary.scalar("positive_loss", loss),
            lambda: tf.constant(False),
        )


def input_fn(x, y, batch_size=16, repeat=True, shuffle=False):
    def fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        if shuffle:
            data = data.shuffle(len(x), seed=0)
        if repeat:
            data = data.repeat()
        return data.batch(batch_size)

    return fn


def forward(estimator, x, hidden):
    """The MLP's logits computed in numpy from the latest checkpoint."""
    net = x
    names = ["dense"] + [f"dense_{i}" for i in range(1, len(hidden) + 1)]
    for i, name in enumerate(names):
        kernel = estimator.get_variable_value(f"{name}/kernel")
        bias = estimator.get_variable_value(f"{name}/bias")
        net = net @ kernel + bias
        if i < len(names) - 1:
            net = np.maximum(net, 0)
    return net


class LossRecorder(keras.callbacks.Callback):
    """Records the loss Keras reports after every batch."""

    def __init__(self):
        super().__init__()
        self.losses = []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(float(logs["loss"]))
