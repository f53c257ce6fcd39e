"""A compiled Keras model trained as an Estimator, then back to Keras.

Run: python examples/keras_model_round_trip.py [--steps N] [--model-dir DIR]

`model_to_estimator` turns a compiled Keras model into an Estimator, which
trains and evaluates it with input_fns and writes model_dir checkpoints (the
Keras model object itself is left untouched). `keras_model_from_estimator`
then returns a compiled Keras model holding the latest checkpoint's weights:
its `predict` and `evaluate` agree with the Estimator's, and it saves to
`.keras` like any other model.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from importlib import resources

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_estimator  # noqa: E402


def load_iris() -> tuple[np.ndarray, np.ndarray]:
    text = resources.files("keras_estimator").joinpath("data/iris.csv").read_text()
    rows = np.loadtxt(text.splitlines()[1:], delimiter=",", dtype="float32")
    return rows[:, :4], rows[:, 4].astype("int32")


def make_model() -> keras.Model:
    """A compiled classifier whose input is named "x" (the features' key)."""
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [
            keras.Input((4,), name="x"),
            keras.layers.Dense(16, activation="relu"),
            keras.layers.Dense(3),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500, help="training steps")
    parser.add_argument("--model-dir", default=None, help="default: a new temp dir")
    args = parser.parse_args(argv)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="keras_round_trip_")

    x, y = load_iris()
    order = np.random.default_rng(0).permutation(len(y))
    train, test = order[:120], order[120:]

    def train_input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": x[train]}, y[train]))
        return data.shuffle(120, seed=0).repeat().batch(32)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x[test]}, y[test])).batch(30)

    # Keras -> Estimator.
    model = make_model()
    est = keras_estimator.model_to_estimator(
        keras_model=model, model_dir=model_dir,
        config=keras_estimator.RunConfig(tf_random_seed=42),
    )
    est.train(train_input_fn, steps=args.steps)
    metrics = est.evaluate(eval_input_fn)
    print(f"Estimator.evaluate: accuracy {metrics['accuracy']:.3f}, "
          f"loss {metrics['loss']:.4f}, global step {metrics['global_step']}")
    estimator_logits = np.stack([
        next(iter(p.values())) if isinstance(p, dict) else p
        for p in est.predict(lambda: tf.data.Dataset.from_tensor_slices(
            {"x": x[test]}).batch(30))
    ])

    # Estimator -> Keras: the latest checkpoint's weights in a compiled model.
    trained = keras_estimator.keras_model_from_estimator(est)
    keras_logits = trained.predict(x[test], verbose=0)
    keras_loss, keras_accuracy = trained.evaluate(
        x[test], y[test], batch_size=30, verbose=0
    )
    print(f"Keras model.evaluate: accuracy {keras_accuracy:.3f}, loss {keras_loss:.4f}")
    difference = float(np.max(np.abs(keras_logits - estimator_logits)))
    print(f"predictions: Keras {keras_logits.shape}, Estimator {estimator_logits.shape}, "
          f"largest difference {difference:.2e}")
    agree = np.allclose(keras_logits, estimator_logits, atol=1e-5)
    print(f"Keras and Estimator predictions agree: {agree}")

    # The user's own model object was not trained by the Estimator.
    untouched = not np.allclose(model.predict(x[test], verbose=0), keras_logits)
    print(f"original Keras model left untrained: {untouched}")

    path = os.path.join(model_dir, "iris.keras")
    trained.save(path)
    reloaded = keras.models.load_model(path)
    same = np.allclose(reloaded.predict(x[test], verbose=0), keras_logits)
    print(f"saved to {path}; reloaded predictions equal: {same}")
    return 0 if agree and same else 1


if __name__ == "__main__":
    sys.exit(main())
