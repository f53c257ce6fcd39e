"""The premade Estimators tutorial: `tf.estimator.DNNClassifier` on iris.

Feature columns, a pandas-free input_fn from dicts, train, evaluate, and
predict on the tutorial's three unlabeled flowers.
"""

import json
import os
import tempfile

import numpy as np
import tensorflow as tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
CSV_COLUMN_NAMES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth"]
SPECIES = ["Setosa", "Versicolor", "Virginica"]


def load_iris():
    rows = np.loadtxt(os.path.join(DATA, "iris.csv"), delimiter=",", skiprows=1)
    rows = rows[np.random.RandomState(0).permutation(len(rows))].astype(np.float32)
    features = {name: rows[:, i] for i, name in enumerate(CSV_COLUMN_NAMES)}
    return features, rows[:, 4].astype(np.int32)


def input_fn(features, labels, training=True, batch_size=32):
    """An input function for training or evaluating."""
    dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
    if training:
        dataset = dataset.shuffle(1000, seed=10).repeat()
    return dataset.batch(batch_size)


def main():
    features, labels = load_iris()
    train = {k: v[:120] for k, v in features.items()}
    test = {k: v[120:] for k, v in features.items()}
    my_feature_columns = [tf.feature_column.numeric_column(key=key) for key in train]
    classifier = tf.estimator.DNNClassifier(
        feature_columns=my_feature_columns,
        hidden_units=[30, 10],
        n_classes=3,
        model_dir=tempfile.mkdtemp(),
        config=tf.estimator.RunConfig(tf_random_seed=10),
    )
    classifier.train(
        input_fn=lambda: input_fn(train, labels[:120], training=True), steps=5000
    )
    eval_result = classifier.evaluate(
        input_fn=lambda: input_fn(test, labels[120:], training=False)
    )
    expected = ["Setosa", "Versicolor", "Virginica"]
    predict_x = {
        "SepalLength": [5.1, 5.9, 6.9],
        "SepalWidth": [3.3, 3.0, 3.1],
        "PetalLength": [1.7, 4.2, 5.4],
        "PetalWidth": [0.5, 1.5, 2.1],
    }

    def predict_input_fn(features, batch_size=256):
        return tf.data.Dataset.from_tensor_slices(dict(features)).batch(batch_size)

    predictions = list(classifier.predict(input_fn=lambda: predict_input_fn(predict_x)))
    predicted = [SPECIES[int(p["class_ids"][0])] for p in predictions]
    result = {
        "global_step": int(eval_result["global_step"]),
        "accuracy": round(float(eval_result["accuracy"]), 4),
        "metric_keys": sorted(eval_result),
        "predicted": predicted,
        "expected": expected,
        "prediction_keys": sorted(predictions[0]),
    }
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
