"""A custom model_fn with feature columns, stopped and resumed from its checkpoints.

Run: python examples/custom_model_fn.py [--steps N] [--model-dir DIR]

The custom-estimator tutorial's model: `tf.compat.v1.feature_column.input_layer`
turns the feature dict into a dense tensor, `keras_estimator.compat.layers`
(tf.compat.v1.layers) builds the hidden layers, and v1 losses, metrics and an
optimizer train it. `RunConfig` saves a checkpoint every `--save-every` steps
and keeps the last three. Training runs in two parts: the second `train()`
call, on a new Estimator over the same model_dir (as after a restart),
continues from the first one's last checkpoint.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from importlib import resources

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_estimator as estimator  # noqa: E402  (was: tf.estimator)
from keras_estimator.compat import layers  # noqa: E402  (was: tf.compat.v1.layers)

FEATURES = ["SepalLength", "SepalWidth", "PetalLength", "PetalWidth"]


def load_iris() -> tuple[dict[str, np.ndarray], np.ndarray]:
    text = resources.files("keras_estimator").joinpath("data/iris.csv").read_text()
    rows = np.loadtxt(text.splitlines()[1:], delimiter=",", dtype="float32")
    return {name: rows[:, i] for i, name in enumerate(FEATURES)}, rows[:, 4].astype(
        "int32"
    )


def my_model_fn(features, labels, mode, params):
    """The tutorial's model_fn: input layer, hidden layers, logits, three modes."""
    net = tf.compat.v1.feature_column.input_layer(features, params["feature_columns"])
    for units in params["hidden_units"]:
        net = layers.dense(net, units=units, activation=tf.nn.relu)
    logits = layers.dense(net, params["n_classes"], activation=None)

    predicted_classes = tf.argmax(logits, 1)
    if mode == estimator.ModeKeys.PREDICT:
        predictions = {
            "class_ids": predicted_classes[:, tf.newaxis],
            "probabilities": tf.nn.softmax(logits),
            "logits": logits,
        }
        return estimator.EstimatorSpec(mode, predictions=predictions)

    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    accuracy = tf.compat.v1.metrics.accuracy(
        labels=labels, predictions=predicted_classes, name="acc_op"
    )
    metrics = {"accuracy": accuracy}
    tf.compat.v1.summary.scalar("accuracy", accuracy[1])
    if mode == estimator.ModeKeys.EVAL:
        return estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)

    optimizer = tf.compat.v1.train.AdagradOptimizer(learning_rate=params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def make_estimator(model_dir: str, save_every: int) -> estimator.Estimator:
    config = estimator.RunConfig(
        tf_random_seed=42,
        save_checkpoints_steps=save_every,
        keep_checkpoint_max=3,
    )
    return estimator.Estimator(
        model_fn=my_model_fn,
        model_dir=model_dir,
        config=config,
        params={
            "feature_columns": [tf.feature_column.numeric_column(n) for n in FEATURES],
            "hidden_units": [10, 10],
            "n_classes": 3,
            "learning_rate": 0.1,
        },
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="total training steps")
    parser.add_argument("--model-dir", default=None, help="default: a new temp dir")
    parser.add_argument("--save-every", type=int, default=None,
                        help="save_checkpoints_steps (default: steps / 10)")
    args = parser.parse_args(argv)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="custom_model_fn_")
    save_every = args.save_every or max(args.steps // 10, 1)

    features, labels = load_iris()
    order = np.random.default_rng(0).permutation(len(labels))
    train, test = order[:120], order[120:]

    def train_input_fn():
        data = tf.data.Dataset.from_tensor_slices(
            ({k: v[train] for k, v in features.items()}, labels[train])
        )
        return data.shuffle(120, seed=0).repeat().batch(32)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(
            ({k: v[test] for k, v in features.items()}, labels[test])
        ).batch(32)

    first_part = args.steps // 2
    classifier = make_estimator(model_dir, save_every)
    classifier.train(train_input_fn, steps=first_part)
    step = classifier.get_variable_value("global_step")
    print(f"first train() stopped at global step {step}")
    print(f"  latest checkpoint: {os.path.basename(classifier.latest_checkpoint())}")

    # A new Estimator (a restarted program) on the same model_dir resumes:
    # max_steps is absolute, so this trains the remaining steps only.
    classifier = make_estimator(model_dir, save_every)
    resumed_from = classifier.get_variable_value("global_step")
    print(f"resumed from global step {resumed_from}")
    classifier.train(train_input_fn, max_steps=args.steps)
    step = classifier.get_variable_value("global_step")
    print(f"second train() stopped at global step {step}")

    kept = tf.train.get_checkpoint_state(model_dir).all_model_checkpoint_paths
    print(f"checkpoints kept (keep_checkpoint_max=3): "
          f"{[os.path.basename(path) for path in kept]}")

    result = classifier.evaluate(eval_input_fn)
    print(f"Test set accuracy: {result['accuracy']:0.3f} "
          f"(loss {result['loss']:.3f}, global step {result['global_step']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
