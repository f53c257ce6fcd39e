"""Keras layers and a tf.keras optimizer inside a model_fn (TF 2.15 style).

Gradients come from `tf.compat.v1.gradients`; the train op groups the Keras
optimizer's `apply_gradients` with the global step increment, the way 2.x
users wired a Keras optimizer into an Estimator.
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def load_iris():
    rows = np.loadtxt(os.path.join(DATA, "iris.csv"), delimiter=",", skiprows=1)
    rows = rows[np.random.RandomState(0).permutation(len(rows))]
    x = rows[:, :4].astype(np.float32)
    y = rows[:, 4].astype(np.int32)
    return (x[:120], y[:120]), (x[120:], y[120:])


def model_fn(features, labels, mode):
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(16, activation="relu"),
            tf.keras.layers.Dense(3),
        ]
    )
    logits = model(features["x"], training=mode == tf.estimator.ModeKeys.TRAIN)
    classes = tf.argmax(logits, axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"class_ids": classes})
    loss = tf.reduce_mean(
        tf.keras.losses.sparse_categorical_crossentropy(
            labels, logits, from_logits=True
        )
    )
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(
            mode,
            loss=loss,
            eval_metric_ops={
                "accuracy": tf.compat.v1.metrics.accuracy(labels, classes)
            },
        )
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.05)
    variables = model.trainable_variables
    gradients = tf.compat.v1.gradients(loss, variables)
    global_step = tf.compat.v1.train.get_global_step()
    train_op = tf.group(
        optimizer.apply_gradients(zip(gradients, variables)),  # noqa: B905
        tf.compat.v1.assign_add(global_step, 1),
    )
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
    (train_x, train_y), (test_x, test_y) = load_iris()

    def train_input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({"x": train_x}, train_y))
        return ds.shuffle(120, seed=1).repeat().batch(16)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": test_x}, test_y)).batch(30)

    estimator = tf.estimator.Estimator(
        model_fn,
        model_dir=tempfile.mkdtemp(),
        config=tf.estimator.RunConfig(tf_random_seed=1),
    )
    estimator.train(train_input_fn, steps=200)
    metrics = estimator.evaluate(eval_input_fn)
    predictions = list(estimator.predict(eval_input_fn))
    result = {
        "global_step": int(metrics["global_step"]),
        "accuracy": round(float(metrics["accuracy"]), 4),
        "num_predictions": len(predictions),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
