"""Compute-bound models side by side: tf.estimator 2.15, keras_estimator, Keras fit.

The core benchmark's MLP is small enough that per-step overhead decides its
speed. Here the step's arithmetic dominates, so this shows whether the
speed-up holds where the loop matters little:

* cnn: the layers-tutorial shape on 28x28x1 images, batch 64: conv 32 3x3,
  max-pool, conv 64 3x3, max-pool, dense 256, logits 10;
* wide_mlp: 512 inputs, two dense layers of 1024, logits 10, batch 128.

Both train with Adam (1e-3) on fixed random data. Each round runs three
processes, in an order that rotates by round: the same model_fn
(`tf.compat.v1.layers`, `tf.compat.v1.train.AdamOptimizer`) under
tf.estimator 2.15 in the reference venv (`_ref_venv.py`) and here after
`keras_estimator.install()`, and the same network as a Keras 3 model under
`Model.fit` (default `steps_per_execution=1`). Each times `train(steps=N)`
(or one N-step epoch) after a warm-up.

    python benchmarks/bench_compute_bound.py [--train-steps 200] [--rounds 3]

Prints medians over rounds with each ratio's range (ratios are taken within a
round), then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))
from _runner import run_worker  # noqa: E402

WARMUP_STEPS = 30
MODELS = {
    "cnn": {"shape": (28, 28, 1), "batch": 64},
    "wide_mlp": {"shape": (512,), "batch": 128},
}
SIDES = ("reference", "ours", "keras_fit")

def model_data(name: str):
    """Model `name`'s fixed random data: (x, y) NumPy arrays of 2048 examples."""
    import numpy as np

    rng = np.random.RandomState(0)
    x = rng.normal(size=(2048, *MODELS[name]["shape"])).astype(np.float32)
    y = rng.randint(0, 10, size=2048).astype(np.int64)
    return x, y


def _dataset(tf, name: str):
    return tf.data.Dataset.from_tensor_slices(model_data(name)).repeat().batch(
        MODELS[name]["batch"]
    )


def model_fn_for(name: str, tf, api, layers):
    """Model `name`'s model_fn on estimator API `api`, built with TF1 `layers`.

    Args:
        name: a key of `MODELS`.
        tf: the imported tensorflow module.
        api: ``tf.estimator`` or ``keras_estimator``.
        layers: ``tf.compat.v1.layers`` or ``keras_estimator.compat.layers``.
    """
    from _tf215_reference import classifier_model_fn

    def logits_fn(features):
        net = features
        if name == "cnn":
            net = layers.conv2d(net, 32, 3, padding="same", activation=tf.nn.relu)
            net = layers.max_pooling2d(net, 2, 2)
            net = layers.conv2d(net, 64, 3, padding="same", activation=tf.nn.relu)
            net = layers.max_pooling2d(net, 2, 2)
            net = layers.flatten(net)
            net = layers.dense(net, 256, activation=tf.nn.relu)
        else:
            net = layers.dense(net, 1024, activation=tf.nn.relu)
            net = layers.dense(net, 1024, activation=tf.nn.relu)
        return layers.dense(net, 10)

    return classifier_model_fn(tf, api, logits_fn, 1e-3)


def _estimator_rate(name: str, train_steps: int) -> float:
    import tensorflow as tf

    model_fn = model_fn_for(name, tf, tf.estimator, tf.compat.v1.layers)
    estimator = tf.estimator.Estimator(model_fn, tempfile.mkdtemp())
    estimator.train(lambda: _dataset(tf, name), steps=WARMUP_STEPS)
    start = time.perf_counter()
    estimator.train(lambda: _dataset(tf, name), steps=train_steps)
    return train_steps / (time.perf_counter() - start)


def _keras_fit_rate(name: str, train_steps: int) -> float:
    import keras
    import tensorflow as tf

    if name == "cnn":
        body = [
            keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(2),
            keras.layers.Flatten(),
            keras.layers.Dense(256, activation="relu"),
        ]
    else:
        body = [
            keras.layers.Dense(1024, activation="relu"),
            keras.layers.Dense(1024, activation="relu"),
        ]
    model = keras.Sequential([keras.Input(MODELS[name]["shape"]), *body, keras.layers.Dense(10)])
    model.compile(
        keras.optimizers.Adam(1e-3),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    dataset = _dataset(tf, name)
    model.fit(dataset, steps_per_epoch=WARMUP_STEPS, epochs=1, verbose=0)
    start = time.perf_counter()
    model.fit(dataset, steps_per_epoch=train_steps, epochs=1, verbose=0)
    return train_steps / (time.perf_counter() - start)


def worker(side: str, train_steps: int) -> dict:
    rate = _keras_fit_rate if side == "keras_fit" else _estimator_rate
    return {name: rate(name, train_steps) for name in MODELS}


def _run(python: str, side: str, train_steps: int) -> dict:
    script = [HERE, "--worker", side, "--train-steps", train_steps]
    return run_worker(python, script, side == "ours")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", choices=SIDES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.train_steps <= 0 or args.rounds <= 0:
        parser.error("--train-steps and --rounds must be positive")
    if args.worker:
        print("RESULT " + json.dumps(worker(args.worker, args.train_steps)))
        return 0

    import _ref_venv

    reference = str(_ref_venv.ensure_reference_python())
    rounds = []
    for index in range(args.rounds):
        order = SIDES[index % 3 :] + SIDES[: index % 3]
        rounds.append(
            {
                side: _run(reference if side == "reference" else sys.executable, side,
                           args.train_steps)
                for side in order
            }
        )

    print(f"{args.train_steps} train steps after {WARMUP_STEPS}; medians of {args.rounds} rounds\n")
    print("| model | 2.15 steps/s | ours steps/s | Keras fit steps/s | ours / 2.15 | ours / Keras fit |")
    print("|---|---:|---:|---:|---:|---:|")
    summary = {}
    for name in MODELS:
        rates = {side: statistics.median(r[side][name] for r in rounds) for side in SIDES}
        vs_ref = [r["ours"][name] / r["reference"][name] for r in rounds]
        vs_fit = [r["ours"][name] / r["keras_fit"][name] for r in rounds]
        print(
            f"| {name} | {rates['reference']:,.1f} | {rates['ours']:,.1f} "
            f"| {rates['keras_fit']:,.1f} "
            f"| {statistics.median(vs_ref):.2f}x ({min(vs_ref):.2f}-{max(vs_ref):.2f}) "
            f"| {statistics.median(vs_fit):.2f}x ({min(vs_fit):.2f}-{max(vs_fit):.2f}) |"
        )
        summary[name] = {"steps_per_sec": rates, "ours_vs_reference": vs_ref,
                         "ours_vs_keras_fit": vs_fit}
    print(json.dumps({"train_steps": args.train_steps, "results": summary, "rounds": rounds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
