"""Where `Estimator.train` with the default hooks spends beyond the hand-fused step.

Two measurements, each in one process, alternating what it compares round
by round so that both sides see the same machine:

* **input read**: `train(steps=N)` of a model whose input never ends
  (`repeat()` over in-memory data), its fused loop reading each step's
  element with a plain `get_next` (what the package does for such an
  input) and, switched through the package's private check, with the
  optional read every input gets that may end. Per model: the MLP of
  `bench_core.py`, and the CNN and wide MLP of `bench_compute_bound.py`.
* **run boundaries** (MLP only): `train(steps=N)` with the default
  `RunConfig` (the logging and step-counter hooks, summaries and their runs
  every 100 steps), with those every 1000 steps, and with none; against the
  same model_fn step fused by hand in one `tf.function` loop (`bench_core.py`'s
  limit for this step).

    python benchmarks/bench_fused_loop.py [--train-steps 5000] [--rounds 8]
        [--models mlp,cnn,wide_mlp]

Prints per-round medians and the paired ratios (the median of each round's
ratio, with the lowest and highest), then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _estimator(name: str, config: Any = None) -> tuple[Any, Any]:
    """A fresh Estimator of model `name` and its train input_fn."""
    import tensorflow as tf

    import keras_estimator

    if name == "mlp":
        from _tf215_reference import workload_input_fns, workload_model_fn

        model_fn = workload_model_fn(tf, keras_estimator, keras_estimator.compat.layers.dense)
        input_fn = workload_input_fns(tf)[0]
    else:
        import bench_compute_bound

        model_fn = bench_compute_bound.model_fn_for(
            name, tf, keras_estimator, keras_estimator.compat.layers
        )

        def input_fn() -> Any:
            return bench_compute_bound._dataset(tf, name)

    est = keras_estimator.Estimator(model_fn, tempfile.mkdtemp(prefix="ke_fused_"), config=config)
    return est, input_fn


def _timed(run: Any) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def _paired(times: dict[str, list[tuple[float, float]]], side: str, base: str) -> dict[str, Any]:
    """Per-round ratios `side / base` of wall and CPU time: median, lowest, highest."""
    out: dict[str, Any] = {}
    for index, clock in enumerate(("wall", "cpu")):
        ratios = [a[index] / b[index] for a, b in zip(times[side], times[base], strict=True)]
        out[clock] = (statistics.median(ratios), min(ratios), max(ratios))
    return out


def input_read(name: str, steps: int, rounds: int) -> dict[str, Any]:
    """`train(steps)` with the endless read against the optional read, alternated."""
    from keras_estimator._src.tf_internals import dataset_sources

    real = dataset_sources.never_ends
    endless = [True]
    # Private on purpose: the package has no switch for the read it chooses.
    dataset_sources.never_ends = lambda iterator: endless[0] and real(iterator)
    try:
        est, input_fn = _estimator(name)
        for flag in (True, False):  # warm-up: trace both loops
            endless[0] = flag
            est.train(input_fn, steps=30)
        times: dict[str, list[tuple[float, float]]] = {"endless": [], "optional": []}
        for index in range(rounds):
            order = ("endless", "optional") if index % 2 == 0 else ("optional", "endless")
            for side in order:
                endless[0] = side == "endless"
                times[side].append(_timed(lambda: est.train(input_fn, steps=steps)))
    finally:
        dataset_sources.never_ends = real
    return {"times": times, "endless_over_optional": _paired(times, "endless", "optional")}


def run_boundaries(steps: int, rounds: int) -> dict[str, Any]:
    """The MLP's `train(steps)` with run boundaries every 100, 1000 and no steps, and by hand."""
    import tensorflow as tf

    import keras_estimator

    configs = {
        "every_100": keras_estimator.RunConfig(),
        "every_1000": keras_estimator.RunConfig(
            save_summary_steps=1000, log_step_count_steps=1000
        ),
        "none": keras_estimator.RunConfig(save_summary_steps=None, log_step_count_steps=None),
    }
    made = {key: _estimator("mlp", config) for key, config in configs.items()}
    for est, input_fn in made.values():
        est.train(input_fn, steps=300)
    est, input_fn = made["every_100"]
    # Private on purpose, as bench_core.py's limit: the model_fn step the
    # Estimator runs, fused by hand.
    model = est._model
    iterator = iter(input_fn())

    @tf.function
    def by_hand(n: tf.Tensor) -> tf.Tensor:
        loss = tf.constant(0.0)
        for _ in tf.range(n):
            loss = model.train_step(next(iterator))["loss"]
        return loss

    by_hand(tf.constant(10))
    times: dict[str, list[tuple[float, float]]] = {key: [] for key in (*configs, "by_hand")}
    sides = list(times)
    for index in range(rounds):
        for side in sides[index % len(sides) :] + sides[: index % len(sides)]:
            if side == "by_hand":
                times[side].append(_timed(lambda: by_hand(tf.constant(steps)).numpy()))
            else:
                est, input_fn = made[side]
                times[side].append(
                    _timed(lambda est=est, input_fn=input_fn: est.train(input_fn, steps=steps))
                )
    return {
        "times": times,
        **{f"{key}_over_by_hand": _paired(times, "by_hand", key) for key in configs},
    }


def _show(label: str, ratio: dict[str, Any]) -> None:
    for clock, (median, low, high) in ratio.items():
        print(f"{label} ({clock} time): {median:.3f}x ({low:.3f} - {high:.3f})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-steps", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--models", default="mlp,cnn,wide_mlp")
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    for name in [m for m in args.models.split(",") if m]:
        steps = args.train_steps if name == "mlp" else max(args.train_steps // 25, 20)
        results[f"input_read_{name}"] = input_read(name, steps, args.rounds)
        _show(
            f"{name}, train({steps}): endless read's speed over the optional read's",
            {
                clock: (1 / median, 1 / high, 1 / low)
                for clock, (median, low, high) in results[f"input_read_{name}"][
                    "endless_over_optional"
                ].items()
            },
        )
    boundaries = run_boundaries(args.train_steps, args.rounds)
    results["run_boundaries"] = boundaries
    for key in ("every_100", "every_1000", "none"):
        _show(
            f"MLP train({args.train_steps}), {key.replace('_', ' ')} steps a run, "
            "speed as a fraction of the hand-fused step's",
            boundaries[f"{key}_over_by_hand"],
        )
    print(json.dumps(results, default=list))
    return 0


if __name__ == "__main__":
    sys.exit(main())
