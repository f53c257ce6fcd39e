#  Copyright 2016 The TensorFlow Authors. All Rights Reserved.
#
#  Licensed under the Apache License, Version 2.0 (the "License");
#  you may not use this file except in compliance with the License.
#  You may obtain a copy of the License at
#
#   http://www.apache.org/licenses/LICENSE-2.0
#
#  Unless required by applicable law or agreed to in writing, software
#  distributed under the License is distributed on an "AS IS" BASIS,
#  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
#  See the License for the specific language governing permissions and
#  limitations under the License.
"""Convolutional Neural Network Estimator for MNIST, built with tf.layers.

TensorFlow's layers tutorial (tensorflow/examples/tutorials/layers/
cnn_mnist.py) as TF 2.x users ran it: `import tensorflow.compat.v1 as tf`.
Local data: the bundled 8x8 digits instead of MNIST's 28x28 images (so the
input reshape and the flattened size follow 8x8: 2 * 2 * 64 after two
poolings), split 1500 / 297; 300 steps, not 20000; a temporary model_dir.
The RESULT line at the end is added.
"""

from __future__ import absolute_import, division, print_function  # noqa: UP010

import json
import os
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

tf.logging.set_verbosity(tf.logging.INFO)

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def cnn_model_fn(features, labels, mode):
    """Model function for CNN."""
    # Input Layer
    # Reshape X to 4-D tensor: [batch_size, width, height, channels]
    # The digits are 8x8 pixels, and have one color channel
    input_layer = tf.reshape(features["x"], [-1, 8, 8, 1])

    # Convolutional Layer #1
    conv1 = tf.layers.conv2d(
        inputs=input_layer,
        filters=32,
        kernel_size=[5, 5],
        padding="same",
        activation=tf.nn.relu,
    )

    # Pooling Layer #1
    pool1 = tf.layers.max_pooling2d(inputs=conv1, pool_size=[2, 2], strides=2)

    # Convolutional Layer #2
    conv2 = tf.layers.conv2d(
        inputs=pool1,
        filters=64,
        kernel_size=[5, 5],
        padding="same",
        activation=tf.nn.relu,
    )

    # Pooling Layer #2
    pool2 = tf.layers.max_pooling2d(inputs=conv2, pool_size=[2, 2], strides=2)

    # Flatten tensor into a batch of vectors
    pool2_flat = tf.reshape(pool2, [-1, 2 * 2 * 64])

    # Dense Layer
    dense = tf.layers.dense(inputs=pool2_flat, units=1024, activation=tf.nn.relu)

    # Add dropout operation; 0.6 probability that element will be kept
    dropout = tf.layers.dropout(
        inputs=dense, rate=0.4, training=mode == tf.estimator.ModeKeys.TRAIN
    )

    # Logits layer
    logits = tf.layers.dense(inputs=dropout, units=10)

    predictions = {
        # Generate predictions (for PREDICT and EVAL mode)
        "classes": tf.argmax(input=logits, axis=1),
        # Add `softmax_tensor` to the graph. It is used for PREDICT and by the
        # `logging_hook`.
        "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
    }
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions)

    # Calculate Loss (for both TRAIN and EVAL modes)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)

    # Configure the Training Op (for TRAIN mode)
    if mode == tf.estimator.ModeKeys.TRAIN:
        optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.001)
        train_op = optimizer.minimize(loss=loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)

    # Add evaluation metrics (for EVAL mode)
    eval_metric_ops = {
        "accuracy": tf.metrics.accuracy(labels=labels, predictions=predictions["classes"])
    }
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=eval_metric_ops)


def main(unused_argv):
    # Load training and eval data
    rows = np.loadtxt(os.path.join(DATA, "digits.csv.gz"), delimiter=",")
    images = (rows[:, :64] / 16.0).astype(np.float32)
    digit_labels = rows[:, 64].astype(np.int32)
    train_data = images[:1500]  # Returns np.array
    train_labels = np.asarray(digit_labels[:1500], dtype=np.int32)
    eval_data = images[1500:]  # Returns np.array
    eval_labels = np.asarray(digit_labels[1500:], dtype=np.int32)

    # Create the Estimator
    mnist_classifier = tf.estimator.Estimator(
        model_fn=cnn_model_fn, model_dir=tempfile.mkdtemp()
    )

    # Set up logging for predictions
    # Log the values in the "Softmax" tensor with label "probabilities"
    tensors_to_log = {"probabilities": "softmax_tensor"}
    logging_hook = tf.train.LoggingTensorHook(tensors=tensors_to_log, every_n_iter=50)

    # Train the model
    train_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={"x": train_data}, y=train_labels, batch_size=100, num_epochs=None, shuffle=True
    )
    mnist_classifier.train(input_fn=train_input_fn, steps=300, hooks=[logging_hook])

    # Evaluate the model and print results
    eval_input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(
        x={"x": eval_data}, y=eval_labels, num_epochs=1, shuffle=False
    )
    eval_results = mnist_classifier.evaluate(input_fn=eval_input_fn)
    print(eval_results)

    print(
        "RESULT "
        + json.dumps(
            {
                "global_step": int(eval_results["global_step"]),
                "accuracy": float(eval_results["accuracy"]),
                "loss": float(eval_results["loss"]),
                "eval_keys": sorted(eval_results),
            },
            sort_keys=True,
        )
    )


if __name__ == "__main__":
    tf.app.run()
