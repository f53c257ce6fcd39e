"""The "Creating custom Estimators" guide on iris, with feature columns.

`tf.feature_column.numeric_column` / `bucketized_column` /
`indicator_column(categorical_column_with_vocabulary_list)` turned into a
dense tensor by `tf.compat.v1.feature_column.input_layer` inside model_fn;
the input comes from a CSV file through `tf.data.experimental.CsvDataset`.
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
CSV_COLUMN_NAMES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth", "Species"]


def write_csv_splits(directory):
    rows = np.loadtxt(os.path.join(DATA, "iris.csv"), delimiter=",", skiprows=1)
    rows = rows[np.random.RandomState(0).permutation(len(rows))]
    paths = []
    for name, part in (("train.csv", rows[:120]), ("test.csv", rows[120:])):
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            f.write(",".join(CSV_COLUMN_NAMES) + "\n")
            for row in part:
                size = "large" if row[0] > 5.8 else "small"
                f.write(
                    ",".join(f"{v:.1f}" for v in row[:4]) + f",{int(row[4])},{size}\n"
                )
        paths.append(path)
    return paths


def csv_input_fn(path, shuffle, repeat):
    defaults = [[0.0], [0.0], [0.0], [0.0], [0], [""]]

    def parse(*values):
        features = dict(zip(CSV_COLUMN_NAMES[:4], values[:4]))  # noqa: B905
        features["Size"] = values[5]
        return features, values[4]

    dataset = tf.data.experimental.CsvDataset(path, defaults, header=True).map(parse)
    if shuffle:
        dataset = dataset.shuffle(120, seed=9)
    if repeat:
        dataset = dataset.repeat()
    return dataset.batch(10)


def my_model_fn(features, labels, mode, params):
    net = tf.compat.v1.feature_column.input_layer(features, params["feature_columns"])
    for units in params["hidden_units"]:
        net = tf.compat.v1.layers.dense(net, units=units, activation=tf.nn.relu)
    logits = tf.compat.v1.layers.dense(net, params["n_classes"], activation=None)
    predicted_classes = tf.argmax(logits, 1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        predictions = {
            "class_ids": predicted_classes[:, tf.newaxis],
            "probabilities": tf.nn.softmax(logits),
            "logits": logits,
        }
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(
        labels=labels, logits=logits
    )
    accuracy = tf.compat.v1.metrics.accuracy(
        labels=labels, predictions=predicted_classes, name="acc_op"
    )
    metrics = {"accuracy": accuracy}
    tf.compat.v1.summary.scalar("accuracy", accuracy[1])
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
    optimizer = tf.compat.v1.train.AdagradOptimizer(learning_rate=0.1)
    train_op = optimizer.minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
    train_path, test_path = write_csv_splits(tempfile.mkdtemp())
    petal_length = tf.feature_column.numeric_column("PetalLength")
    feature_columns = [
        tf.feature_column.numeric_column(name) for name in CSV_COLUMN_NAMES[:4]
    ] + [
        tf.feature_column.bucketized_column(petal_length, boundaries=[2.0, 5.0]),
        tf.feature_column.indicator_column(
            tf.feature_column.categorical_column_with_vocabulary_list(
                "Size", ["small", "large"]
            )
        ),
    ]
    classifier = tf.estimator.Estimator(
        model_fn=my_model_fn,
        model_dir=tempfile.mkdtemp(),
        params={
            "feature_columns": feature_columns,
            "hidden_units": [10, 10],
            "n_classes": 3,
        },
        config=tf.estimator.RunConfig(tf_random_seed=9),
    )
    classifier.train(input_fn=lambda: csv_input_fn(train_path, True, True), steps=200)
    eval_result = classifier.evaluate(
        input_fn=lambda: csv_input_fn(test_path, False, False)
    )
    predictions = list(
        classifier.predict(lambda: csv_input_fn(test_path, False, False))
    )
    result = {
        "global_step": int(eval_result["global_step"]),
        "accuracy": round(float(eval_result["accuracy"]), 4),
        "num_predictions": len(predictions),
        "input_layer_width": 4 + 3 + 2,
        "prediction_keys": sorted(predictions[0]),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
