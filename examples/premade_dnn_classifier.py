"""Premade DNNClassifier on iris: the tf.estimator premade-estimator tutorial.

Run: python examples/premade_dnn_classifier.py [--steps N] [--model-dir DIR]

Four numeric feature columns feed a DNNClassifier with two hidden layers
(30 and 10 units) and three classes. The program trains, evaluates on the 30
flowers it held out, and predicts the species of three new flowers (the
tutorial's own three samples). Only the import differs from the tf.estimator
version: `import keras_estimator as estimator` in place of `tf.estimator`.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
from importlib import resources

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_estimator as estimator  # noqa: E402  (was: tf.estimator)

FEATURES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth"]
SPECIES = ["Setosa", "Versicolor", "Virginica"]


def load_iris() -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The bundled iris data as ({feature name: column}, labels)."""
    text = resources.files("keras_estimator").joinpath("data/iris.csv").read_text()
    rows = np.loadtxt(text.splitlines()[1:], delimiter=",", dtype="float32")
    return {name: rows[:, i] for i, name in enumerate(FEATURES)}, rows[:, 4].astype(
        "int32"
    )


def train_input_fn(features, labels, batch_size):
    data = tf.data.Dataset.from_tensor_slices((features, labels))
    return data.shuffle(1000, seed=0).repeat().batch(batch_size)


def eval_input_fn(features, labels, batch_size):
    data = tf.data.Dataset.from_tensor_slices(
        features if labels is None else (features, labels)
    )
    return data.batch(batch_size)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="training steps")
    parser.add_argument("--model-dir", default=None, help="default: a new temp dir")
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args(argv)
    tf.get_logger().setLevel(logging.ERROR)  # TF's deprecation notices
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="premade_dnn_")

    features, labels = load_iris()
    order = np.random.default_rng(0).permutation(len(labels))
    train, test = order[:120], order[120:]
    train_x = {name: column[train] for name, column in features.items()}
    test_x = {name: column[test] for name, column in features.items()}

    feature_columns = [
        tf.feature_column.numeric_column(key=name) for name in FEATURES
    ]
    classifier = estimator.DNNClassifier(
        feature_columns=feature_columns,
        hidden_units=[30, 10],
        n_classes=3,
        # The tutorial's default (Adagrad at 0.001) needs ~5000 steps; Adam at 0.01 ~500.
        optimizer=tf.keras.optimizers.Adam(learning_rate=0.01),
        model_dir=model_dir,
        config=estimator.RunConfig(tf_random_seed=42),
    )
    classifier.train(
        lambda: train_input_fn(train_x, labels[train], args.batch_size),
        steps=args.steps,
    )
    result = classifier.evaluate(
        lambda: eval_input_fn(test_x, labels[test], args.batch_size)
    )
    print(f"trained {result['global_step']} steps")
    print(f"Test set accuracy: {result['accuracy']:0.3f}")

    # The tutorial's three unseen flowers.
    expected = ["Setosa", "Versicolor", "Virginica"]
    predict_x = {
        "SepalLength": np.array([5.1, 5.9, 6.9], "float32"),
        "SepalWidth": np.array([3.3, 3.0, 3.1], "float32"),
        "PetalLength": np.array([1.7, 4.2, 5.4], "float32"),
        "PetalWidth": np.array([0.5, 1.5, 2.1], "float32"),
    }
    predictions = classifier.predict(
        lambda: eval_input_fn(predict_x, None, args.batch_size)
    )
    for prediction, wanted in zip(predictions, expected, strict=True):
        class_id = int(prediction["class_ids"][0])
        probability = prediction["probabilities"][class_id]
        print(
            f'Prediction is "{SPECIES[class_id]}" ({100 * probability:.1f}%), '
            f'expected "{wanted}"'
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
