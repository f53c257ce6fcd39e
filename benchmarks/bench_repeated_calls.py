"""Repeated evaluate() and predict() calls: keras_estimator vs tf.estimator 2.15.

What a user pays per call when calling ``evaluate`` or ``predict`` again and
again on a trained model_dir (an evaluator loop, a service answering single
requests), once the first call has built whatever it builds. Both sides run
the same workload, each in a subprocess of its own (never both at once), the
reference first in even rounds and last in odd ones:

* data and model: ``_tf215_reference.make_workload_data`` (4096 x 4 float32,
  3 classes), the MLP 4-64-64-3 with Adam 1e-3 of ``_tf215_reference.py``
  (``tf.compat.v1.layers.dense`` there, ``keras_estimator.compat.layers.dense``
  here); EVAL returns the loss and a ``tf.compat.v1.metrics.accuracy``;
  ``RunConfig()`` defaults with a fresh model_dir, trained ``train(steps=200)``;
* evaluate: ``evaluate(input_fn)`` where input_fn is
  ``Dataset.from_tensor_slices(({"x": x[:640]}, y[:640])).batch(32)``: 20
  batches, to the end of the input. One untimed call, then ``--eval-calls``
  timed calls;
* predict: ``next(est.predict(input_fn))`` on the single example
  ``{"x": x[:1]}`` (batch 1), a fresh generator each call. One untimed call,
  then ``--predict-calls`` timed calls.

Each side reports the median ms per call of its timed calls; the ratios
(theirs / ours, higher is better for keras_estimator) are taken within each
round, and the report gives their median with the lowest and highest round::

    python benchmarks/bench_repeated_calls.py [--rounds 3] [--eval-calls 20]
        [--predict-calls 50]

``--side ours|ref`` runs one side in this process and prints its JSON line
(the ``ref`` side needs the reference interpreter of ``_ref_venv.py``).
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
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from _tf215_reference import (  # noqa: E402
    BATCH_SIZE,
    HIDDEN_UNITS,
    LEARNING_RATE,
    N_CLASSES,
    WARMUP_STEPS,
    make_workload_data,
)

EVAL_EXAMPLES = 640  # 20 batches of 32


def _log(message: str) -> None:
    print(f"[bench_repeated_calls] {message}", file=sys.stderr, flush=True)


def _time_calls(call: Any, count: int) -> list[float]:
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def run_side(side: str, eval_calls: int, predict_calls: int) -> dict[str, Any]:
    """Trains, then times repeated evaluate and predict calls on one side."""
    import tensorflow as tf

    if side == "ref":
        tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
        api = tf.estimator
        dense = tf.compat.v1.layers.dense
    else:
        import keras_estimator

        api = keras_estimator
        dense = keras_estimator.compat.layers.dense

    def model_fn(features, labels, mode):
        net = features["x"]
        for units in HIDDEN_UNITS:
            net = dense(net, units, activation=tf.nn.relu)
        logits = dense(net, N_CLASSES)
        classes = tf.argmax(logits, 1)
        if mode == api.ModeKeys.PREDICT:
            return api.EstimatorSpec(
                mode, predictions={"logits": logits, "class_ids": classes}
            )
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        if mode == api.ModeKeys.EVAL:
            accuracy = tf.compat.v1.metrics.accuracy(labels, classes)
            return api.EstimatorSpec(
                mode, loss=loss, eval_metric_ops={"accuracy": accuracy}
            )
        train_op = tf.compat.v1.train.AdamOptimizer(LEARNING_RATE).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return api.EstimatorSpec(mode, loss=loss, train_op=train_op)

    x, y = make_workload_data()

    def train_input_fn():
        return (
            tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(BATCH_SIZE)
        )

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(
            ({"x": x[:EVAL_EXAMPLES]}, y[:EVAL_EXAMPLES])
        ).batch(BATCH_SIZE)

    def single_example_input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": x[:1]}).batch(1)

    result: dict[str, Any] = {"side": side, "tensorflow_version": tf.__version__}
    with tempfile.TemporaryDirectory(prefix=f"bench_calls_{side}_") as model_dir:
        est = api.Estimator(model_fn, config=api.RunConfig(model_dir=model_dir))
        est.train(train_input_fn, steps=WARMUP_STEPS)

        t0 = time.perf_counter()
        first = est.evaluate(eval_input_fn)
        result["evaluate_first_call_ms"] = (time.perf_counter() - t0) * 1e3
        if int(first["global_step"]) != WARMUP_STEPS:
            raise RuntimeError(f"unexpected evaluation {first}")
        metrics = []
        times = _time_calls(
            lambda: metrics.append(est.evaluate(eval_input_fn)), eval_calls
        )
        if any(m["accuracy"] != first["accuracy"] for m in metrics):
            raise RuntimeError("repeated evaluations disagree")
        result["evaluate_call_ms"] = statistics.median(times)
        result["evaluate_accuracy"] = float(first["accuracy"])

        t0 = time.perf_counter()
        prediction = next(est.predict(single_example_input_fn))
        result["predict_first_call_ms"] = (time.perf_counter() - t0) * 1e3
        if tuple(prediction["logits"].shape) != (N_CLASSES,):
            raise RuntimeError(f"unexpected prediction {prediction}")
        times = _time_calls(
            lambda: next(est.predict(single_example_input_fn)), predict_calls
        )
        result["predict_call_ms"] = statistics.median(times)
    return result


def _run_subprocess(
    python: str, side: str, eval_calls: int, predict_calls: int
) -> dict:
    cmd = [
        python,
        str(Path(__file__).resolve()),
        "--side",
        side,
        "--eval-calls",
        str(eval_calls),
        "--predict-calls",
        str(predict_calls),
    ]
    _log(f"running the {side} side: " + " ".join(cmd))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run(
        cmd, stdout=subprocess.PIPE, stderr=sys.stderr, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the {side} side failed (exit status {proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _ratio_line(label: str, ratios: list[float]) -> str:
    return (
        f"{label:<34} {statistics.median(ratios):7.1f}x  "
        f"({min(ratios):.1f} - {max(ratios):.1f})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--eval-calls", type=int, default=20)
    parser.add_argument("--predict-calls", type=int, default=50)
    parser.add_argument("--side", choices=("ours", "ref"))
    args = parser.parse_args(argv)
    if min(args.rounds, args.eval_calls, args.predict_calls) <= 0:
        parser.error("--rounds, --eval-calls and --predict-calls must be positive")
    if args.side:
        result = run_side(args.side, args.eval_calls, args.predict_calls)
        sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")
        return 0

    from _ref_venv import ensure_reference_python

    pythons = {"ref": ensure_reference_python(), "ours": sys.executable}
    rounds = []
    for index in range(args.rounds):
        order = ("ref", "ours") if index % 2 == 0 else ("ours", "ref")
        rounds.append(
            {
                side: _run_subprocess(
                    pythons[side], side, args.eval_calls, args.predict_calls
                )
                for side in order
            }
        )
    print(
        f"{'round':<6} {'2.15 evaluate ms':>17} {'ours evaluate ms':>17} "
        f"{'2.15 predict ms':>16} {'ours predict ms':>16}"
    )
    for index, rnd in enumerate(rounds):
        ref, ours = rnd["ref"], rnd["ours"]
        print(
            f"{index:<6} {ref['evaluate_call_ms']:>17.1f} {ours['evaluate_call_ms']:>17.2f} "
            f"{ref['predict_call_ms']:>16.1f} {ours['predict_call_ms']:>16.2f}"
        )
    ratios = {
        key: [r["ref"][key] / r["ours"][key] for r in rounds]
        for key in ("evaluate_call_ms", "predict_call_ms")
    }
    print(
        f"median over {args.rounds} rounds of the per-call median "
        f"({args.eval_calls} evaluate calls of {EVAL_EXAMPLES // BATCH_SIZE} batches, "
        f"{args.predict_calls} single-example predict calls per round)"
    )
    print(_ratio_line("evaluate() per call (2.15 / ours)", ratios["evaluate_call_ms"]))
    print(_ratio_line("predict() per call (2.15 / ours)", ratios["predict_call_ms"]))
    summary = {
        side: {
            key: statistics.median(r[side][key] for r in rounds)
            for key in (
                "evaluate_call_ms",
                "evaluate_first_call_ms",
                "predict_call_ms",
                "predict_first_call_ms",
            )
        }
        for side in ("ref", "ours")
    }
    summary["ratios"] = {key: statistics.median(v) for key, v in ratios.items()}
    summary["ratios_per_round"] = ratios
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
