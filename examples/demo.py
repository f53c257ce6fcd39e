"""Demo: a tf.estimator-style model_fn trained, evaluated and exported on iris.

Run: python examples/demo.py [--model-dir DIR] [--steps N]

The model_fn is written as for tf.estimator 2.15 (v1 losses, metrics and
optimizer, `keras_estimator.compat.layers` in place of `tf.compat.v1.layers`);
only the import changed. It trains, evaluates, predicts, resumes from its
checkpoints, and exports the trained weights as a SavedModel.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from importlib import resources

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_estimator  # noqa: E402
from keras_estimator.compat import layers  # noqa: E402


def load_iris() -> tuple[np.ndarray, np.ndarray]:
    text = resources.files("keras_estimator").joinpath("data/iris.csv").read_text()
    rows = np.loadtxt(text.splitlines()[1:], delimiter=",")
    return rows[:, :4].astype("float32"), rows[:, 4].astype("int32")


def model_fn(features, labels, mode, params):
    hidden = layers.dense(features["x"], params["hidden_units"], activation=tf.nn.relu)
    logits = layers.dense(hidden, 3)
    classes = tf.argmax(logits, axis=1)
    if mode == keras_estimator.ModeKeys.PREDICT:
        return keras_estimator.EstimatorSpec(
            mode,
            predictions={"class_ids": classes, "probabilities": tf.nn.softmax(logits)},
        )
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == keras_estimator.ModeKeys.EVAL:
        accuracy = tf.compat.v1.metrics.accuracy(labels, classes)
        return keras_estimator.EstimatorSpec(
            mode, loss=loss, eval_metric_ops={"accuracy": accuracy}
        )
    optimizer = tf.compat.v1.train.AdagradOptimizer(params["learning_rate"])
    train_op = optimizer.minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return keras_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    # Estimator logs go to TensorFlow's logger, as tf.estimator's did.
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="keras_estimator_demo_")

    x, y = load_iris()
    order = np.random.default_rng(0).permutation(len(x))
    train_idx, test_idx = order[:120], order[120:]

    def train_input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": x[train_idx]}, y[train_idx]))
        return data.shuffle(120, seed=0).repeat().batch(32)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(
            ({"x": x[test_idx]}, y[test_idx])
        ).batch(30)

    config = keras_estimator.RunConfig(
        tf_random_seed=42, save_checkpoints_steps=250, keep_checkpoint_max=3
    )
    estimator = keras_estimator.Estimator(
        model_fn,
        model_dir=model_dir,
        config=config,
        params={"hidden_units": 16, "learning_rate": 0.1},
    )
    estimator.train(train_input_fn, steps=args.steps // 2)
    # A new Estimator on the same model_dir resumes from the last checkpoint.
    estimator = keras_estimator.Estimator(
        model_fn, model_dir=model_dir, config=config,
        params={"hidden_units": 16, "learning_rate": 0.1},
    )
    estimator.train(train_input_fn, max_steps=args.steps)
    metrics = estimator.evaluate(eval_input_fn)
    # evaluate() returns numpy scalars (np.float32 metrics, np.int64 global_step).
    shown = ", ".join(f"{name} = {value:g}" for name, value in sorted(metrics.items()))
    print(f"evaluation on 30 held-out flowers: {shown}")

    predictions = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(
        {"x": x[test_idx[:5]]}).batch(5)))
    for prediction, label in zip(predictions, y[test_idx[:5]], strict=True):
        print(f"predicted class {prediction['class_ids']} (true {label}), "
              f"p={prediction['probabilities'].round(3)}")

    export_dir = export_for_serving(estimator, model_dir)
    print(f"checkpoints: {estimator.latest_checkpoint()}")
    print(f"exported SavedModel: {export_dir}")
    if metrics["accuracy"] < 0.9:
        raise SystemExit(f"accuracy {metrics['accuracy']:.3f} is below 0.9")


def export_for_serving(estimator: keras_estimator.Estimator, model_dir: str) -> str:
    """Exports the latest checkpoint as a SavedModel and serves 3 flowers from it."""
    receiver_fn = keras_estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.TensorSpec([None, 4], tf.float32)}
    )
    export_dir = estimator.export_saved_model(
        os.path.join(model_dir, "export", "demo"), receiver_fn
    ).decode()
    reloaded = tf.saved_model.load(export_dir)
    x, y = load_iris()
    one_of_each = [int(np.flatnonzero(y == label)[0]) for label in range(3)]
    served = reloaded.signatures["serving_default"](x=tf.constant(x[one_of_each]))
    print(
        f"served class_ids for 3 flowers: {served['class_ids'].numpy()} "
        f"(true {y[one_of_each]})"
    )
    return export_dir


if __name__ == "__main__":
    main()
