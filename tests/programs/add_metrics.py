"""`tf.estimator.add_metrics`: extra evaluation metrics on an existing Estimator.

A binary classifier (wine class 0 against the rest); `add_metrics` adds an
AUC from a `tf.keras.metrics.AUC` object (the form the API docs show) and a
v1 `tf.compat.v1.metrics.precision` pair, plus one metric_fn reading
`features`.
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def load_binary_wine():
    rows = np.loadtxt(os.path.join(DATA, "wine_data.csv"), delimiter=",", skiprows=1)
    rows = rows[np.random.RandomState(1).permutation(len(rows))]
    x = rows[:, :13].astype(np.float32)
    x = (x - x.mean(axis=0)) / x.std(axis=0)
    y = (rows[:, 13] == 0).astype(np.float32)[:, None]
    return (x[:130], y[:130]), (x[130:], y[130:])


def model_fn(features, labels, mode):
    logits = tf.compat.v1.layers.dense(features["x"], 1)
    predictions = {
        "logistic": tf.sigmoid(logits),
        "class_ids": tf.cast(logits > 0, tf.int64),
    }
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.2).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(
        mode, predictions=predictions, loss=loss, train_op=train_op
    )


def my_auc(labels, predictions):
    auc_metric = tf.keras.metrics.AUC(name="my_auc")
    auc_metric.update_state(y_true=labels, y_pred=predictions["logistic"])
    return {"auc": auc_metric}


def my_precision(labels, predictions, features):
    del features
    return {
        "precision": tf.compat.v1.metrics.precision(labels, predictions["class_ids"])
    }


def main():
    (train_x, train_y), (test_x, test_y) = load_binary_wine()

    def train_input_fn():
        ds = tf.data.Dataset.from_tensor_slices(({"x": train_x}, train_y))
        return ds.shuffle(130, seed=3).repeat().batch(13)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": test_x}, test_y)).batch(16)

    estimator = tf.estimator.Estimator(
        model_fn,
        model_dir=tempfile.mkdtemp(),
        config=tf.estimator.RunConfig(tf_random_seed=3),
    )
    estimator = tf.estimator.add_metrics(estimator, my_auc)
    estimator = tf.estimator.add_metrics(estimator, my_precision)
    estimator.train(train_input_fn, steps=100)
    metrics = estimator.evaluate(eval_input_fn)
    result = {
        "global_step": int(metrics["global_step"]),
        "metric_keys": sorted(metrics),
        "auc": round(float(metrics["auc"]), 4),
        "precision": round(float(metrics["precision"]), 4),
        "num_test": int(len(test_y)),
        "positives": int(test_y.sum()),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
