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
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))

WARMUP_STEPS = 30
MODELS = {
    "cnn": {"shape": (28, 28, 1), "batch": 64},
    "wide_mlp": {"shape": (512,), "batch": 128},
}
SIDES = ("reference", "ours", "keras_fit")
LAUNCHER = (
    "import keras_estimator, runpy, sys; keras_estimator.install(); "
    "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def _dataset(tf, name: str):
    import numpy as np

    spec = MODELS[name]
    rng = np.random.RandomState(0)
    x = rng.normal(size=(2048, *spec["shape"])).astype(np.float32)
    y = rng.randint(0, 10, size=2048).astype(np.int64)
    return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(spec["batch"])


def _model_fn(name: str):
    import tensorflow as tf

    layers = tf.compat.v1.layers

    def model_fn(features, labels, mode):
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
        logits = layers.dense(net, 10)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def _estimator_rate(name: str, train_steps: int) -> float:
    import tensorflow as tf

    estimator = tf.estimator.Estimator(_model_fn(name), tempfile.mkdtemp())
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
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONHASHSEED="0")
    script = [str(HERE), "--worker", side, "--train-steps", str(train_steps)]
    command = [python, "-c", LAUNCHER, *script] if side == "ours" else [python, *script]
    completed = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=1800, check=False
    )
    for line in completed.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    raise RuntimeError(f"{side} run failed:\n" + completed.stderr[-3000:])


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
