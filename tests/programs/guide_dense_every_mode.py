"""A guide-style custom Estimator on wine data (TF 2.15).

`tf.compat.v1.layers.dense` stacks; loss, metrics and
`optimizer.minimize(loss, global_step=...)` are built in every mode and one
EstimatorSpec is returned (predictions included). Evaluated twice.
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def load_wine():
    rows = np.loadtxt(os.path.join(DATA, "wine_data.csv"), delimiter=",", skiprows=1)
    rows = rows[np.random.RandomState(0).permutation(len(rows))]
    x = rows[:, :13].astype(np.float32)
    x = (x - x.mean(axis=0)) / x.std(axis=0)
    y = rows[:, 13].astype(np.int64)
    return (x[:140], y[:140]), (x[140:], y[140:])


def model_fn(features, labels, mode, params):
    net = features["x"]
    for units in params["hidden_units"]:
        net = tf.compat.v1.layers.dense(net, units, activation=tf.nn.relu)
    logits = tf.compat.v1.layers.dense(net, 3)
    classes = tf.argmax(logits, axis=1)
    predictions = {"class_ids": classes, "probabilities": tf.nn.softmax(logits)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    metrics = {"accuracy": tf.compat.v1.metrics.accuracy(labels, classes)}
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(params["learning_rate"])
    train_op = optimizer.minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(
        mode,
        predictions=predictions,
        loss=loss,
        train_op=train_op,
        eval_metric_ops=metrics,
    )


def main():
    (train_x, train_y), (test_x, test_y) = load_wine()

    def train_input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({"x": train_x}, train_y))
        return ds.shuffle(140, seed=1).repeat().batch(20)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": test_x}, test_y)).batch(10)

    estimator = tf.estimator.Estimator(
        model_fn,
        model_dir=tempfile.mkdtemp(),
        params={"hidden_units": [16], "learning_rate": 0.1},
        config=tf.estimator.RunConfig(tf_random_seed=7),
    )
    estimator.train(train_input_fn, steps=150)
    first = estimator.evaluate(eval_input_fn)
    second = estimator.evaluate(eval_input_fn)
    predictions = list(estimator.predict(eval_input_fn))
    result = {
        "eval_global_steps": [int(first["global_step"]), int(second["global_step"])],
        "accuracy": [
            round(float(first["accuracy"]), 4),
            round(float(second["accuracy"]), 4),
        ],
        "loss": [round(float(first["loss"]), 4), round(float(second["loss"]), 4)],
        "num_predictions": len(predictions),
        "prediction_keys": sorted(predictions[0]),
        "num_test": int(len(test_y)),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
