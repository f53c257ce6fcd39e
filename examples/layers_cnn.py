"""The TF1 layers-tutorial CNN, on the bundled 8x8 digits.

Run: python examples/layers_cnn.py [--steps N] [--model-dir DIR]

The model_fn of TensorFlow's "Build a Convolutional Neural Network using
Estimators" tutorial, written with `tf.compat.v1.layers` (here
`keras_estimator.compat.layers`, the same functions with TF1 variable names):
conv -> max-pool -> conv -> max-pool -> dense -> dropout -> logits. The MNIST
28x28 images are replaced by the 1,797 8x8 digits of `examples/data/digits.csv.gz`
(the UCI optical digits, pixel values 0-16), so the pooling is 2x2 to 4x4 to 2x2.
A `LoggingTensorHook` logs the named softmax tensor's probabilities while
training, as the tutorial did.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_estimator as estimator  # noqa: E402  (was: tf.estimator)
from keras_estimator.compat import layers  # noqa: E402  (was: tf.compat.v1.layers)

DIGITS = Path(__file__).resolve().parent / "data" / "digits.csv.gz"


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """(images [N, 8, 8, 1] scaled to [0, 1], labels [N]) from the bundled file."""
    rows = np.loadtxt(DIGITS, delimiter=",", dtype="float32")
    images = (rows[:, :64] / 16.0).reshape(-1, 8, 8, 1)
    return images, rows[:, 64].astype("int32")


def cnn_model_fn(features, labels, mode):
    """The tutorial's model_fn, sized for 8x8 images."""
    input_layer = tf.reshape(features["x"], [-1, 8, 8, 1])
    conv1 = layers.conv2d(
        inputs=input_layer, filters=32, kernel_size=[3, 3], padding="same",
        activation=tf.nn.relu,
    )
    pool1 = layers.max_pooling2d(inputs=conv1, pool_size=[2, 2], strides=2)  # 4x4
    conv2 = layers.conv2d(
        inputs=pool1, filters=64, kernel_size=[3, 3], padding="same",
        activation=tf.nn.relu,
    )
    pool2 = layers.max_pooling2d(inputs=conv2, pool_size=[2, 2], strides=2)  # 2x2
    pool2_flat = tf.reshape(pool2, [-1, 2 * 2 * 64])
    dense = layers.dense(inputs=pool2_flat, units=128, activation=tf.nn.relu)
    dropout = layers.dropout(
        inputs=dense, rate=0.4, training=mode == estimator.ModeKeys.TRAIN
    )
    logits = layers.dense(inputs=dropout, units=10)

    predictions = {
        "classes": tf.argmax(input=logits, axis=1),
        # Named, so that a LoggingTensorHook can fetch it by name.
        "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
    }
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(mode=mode, predictions=predictions)

    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == estimator.ModeKeys.TRAIN:
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.1)
        train_op = optimizer.minimize(
            loss=loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)

    eval_metric_ops = {
        "accuracy": tf.compat.v1.metrics.accuracy(
            labels=labels, predictions=predictions["classes"]
        )
    }
    return estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=eval_metric_ops)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500, help="training steps")
    parser.add_argument("--model-dir", default=None, help="default: a new temp dir")
    parser.add_argument("--log-every", type=int, default=None,
                        help="LoggingTensorHook every_n_iter (default: steps / 3)")
    args = parser.parse_args(argv)
    # The hook's lines go to the `keras_estimator` logger at INFO.
    logging.basicConfig(level=logging.INFO, stream=sys.stdout,
                        format="%(levelname)s %(message)s")
    np.set_printoptions(precision=2, suppress=True, linewidth=200)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="layers_cnn_")

    images, labels = load_digits()
    order = np.random.default_rng(0).permutation(len(labels))
    train, test = order[:1500], order[1500:]

    def train_input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": images[train]}, labels[train]))
        return data.shuffle(1500, seed=0).repeat().batch(100)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(
            ({"x": images[test]}, labels[test])
        ).batch(100)

    classifier = estimator.Estimator(
        model_fn=cnn_model_fn, model_dir=model_dir,
        config=estimator.RunConfig(tf_random_seed=42, log_step_count_steps=500),
    )
    # Log the first example's probabilities every N steps (the tutorial logged
    # the whole batch's).
    logging_hook = estimator.LoggingTensorHook(
        tensors={"probabilities": "softmax_tensor"},
        every_n_iter=args.log_every or max(args.steps // 3, 1),
        formatter=lambda values: f"probabilities (first example): "
        f"{values['probabilities'][0]}",
    )
    classifier.train(input_fn=train_input_fn, steps=args.steps, hooks=[logging_hook])

    result = classifier.evaluate(input_fn=eval_input_fn)
    print(f"Test set accuracy: {result['accuracy']:0.3f} on {len(test)} digits "
          f"after {result['global_step']} steps")

    predictions = list(classifier.predict(lambda: tf.data.Dataset.from_tensor_slices(
        {"x": images[test[:10]]}).batch(10)))
    print(f"predicted: {[int(p['classes']) for p in predictions]}")
    print(f"true:      {labels[test[:10]].tolist()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
