"""MirroredStrategy replicas against one device, at the same global batch.

Run: python benchmarks/bench_distribution.py [--train-steps N] [--replicas R]

The core MLP (benchmarks/_tf215_reference.py's workload: 4-64-64-3, Adam,
global batch 32) is trained by an Estimator with
`RunConfig(train_distribute=MirroredStrategy(R logical CPUs))`, each replica
reading global_batch / R examples per step, and by one without a strategy
reading the whole batch; both in this process, timed in back-to-back pairs
(alternating which goes first) so machine load falls on both: the ratio is
the median of the pairs' ratios, the rates the median of each side's runs.
The strategy's own cost is measured with `MirroredStrategy` over one CPU
device against no strategy (the same device, the same batch), and, where
GPUs are visible, over one GPU against no strategy.

Prints a table and ratios, then one JSON line with every number.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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
    make_workload_data,
    workload_model_fn,
)


def _estimator(strategy: Any, batch_size: int) -> tuple[Any, Any]:
    import tensorflow as tf

    import keras_estimator

    x, y = make_workload_data()

    def input_fn(input_context: Any = None) -> Any:
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(batch_size)

    config = keras_estimator.RunConfig(tf_random_seed=0, train_distribute=strategy)
    model_fn = workload_model_fn(tf, keras_estimator, keras_estimator.compat.layers.dense)
    estimator = keras_estimator.Estimator(model_fn, tempfile.mkdtemp(), config)
    return estimator, input_fn


def _time_train(estimator: Any, input_fn: Any, steps: int) -> float:
    started = time.perf_counter()
    estimator.train(input_fn, steps=steps)
    return steps / (time.perf_counter() - started)


# Timed pairs (strategy, no strategy) per comparison.
PAIRS = 5


def compare(strategy: Any, replicas: int, steps: int, label: str) -> dict[str, Any]:
    """Steps/s of `strategy` (global batch split over replicas) and of no strategy."""
    distributed, distributed_input = _estimator(strategy, BATCH_SIZE // replicas)
    single, single_input = _estimator(None, BATCH_SIZE)
    for estimator, input_fn in ((distributed, distributed_input), (single, single_input)):
        estimator.train(input_fn, steps=200)  # build, trace, first checkpoint
    rates: dict[str, list[float]] = {"strategy": [], "none": []}
    ratios = []
    for index in range(PAIRS):
        # Back to back, alternating which goes first.
        order = ("strategy", "none") if index % 2 == 0 else ("none", "strategy")
        pair = {}
        for name in order:
            if name == "strategy":
                pair[name] = _time_train(distributed, distributed_input, steps)
            else:
                pair[name] = _time_train(single, single_input, steps)
            rates[name].append(pair[name])
        ratios.append(pair["strategy"] / pair["none"])
    median = {name: statistics.median(values) for name, values in rates.items()}
    result = {
        "label": label,
        "replicas": replicas,
        "steps": steps,
        "global_batch": BATCH_SIZE,
        "strategy_steps_per_sec": median["strategy"],
        "none_steps_per_sec": median["none"],
        "all_rates": rates,
        "pair_ratios": ratios,
        "ratio": statistics.median(ratios),
    }
    print(
        f"[bench_distribution] {label}: {median['strategy']:.0f} steps/s with the "
        f"strategy, {median['none']:.0f} without (median of pairs {result['ratio']:.2f}x)",
        flush=True,
    )
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-steps", type=int, default=2000)
    parser.add_argument("--replicas", type=int, default=2)
    args = parser.parse_args(argv)
    if args.train_steps <= 0 or args.replicas < 2 or BATCH_SIZE % args.replicas:
        parser.error(
            f"--train-steps must be positive and --replicas >= 2 must divide the "
            f"global batch {BATCH_SIZE}"
        )

    import tensorflow as tf

    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(
        cpus[0], [tf.config.LogicalDeviceConfiguration()] * args.replicas
    )
    tf.get_logger().setLevel("ERROR")
    devices = [f"/cpu:{index}" for index in range(args.replicas)]
    results = [
        compare(
            tf.distribute.MirroredStrategy(devices),
            args.replicas,
            args.train_steps,
            f"MirroredStrategy over {args.replicas} logical CPUs vs no strategy",
        ),
        compare(
            tf.distribute.MirroredStrategy(["/cpu:0"]),
            1,
            args.train_steps,
            "MirroredStrategy over 1 CPU device vs no strategy",
        ),
    ]
    if tf.config.list_physical_devices("GPU"):
        results.append(
            compare(
                tf.distribute.MirroredStrategy(["/gpu:0"]),
                1,
                args.train_steps,
                "MirroredStrategy over 1 GPU vs no strategy",
            )
        )
    print()
    print("| comparison | with strategy steps/s | without steps/s | ratio |")
    print("|---|---:|---:|---:|")
    for result in results:
        print(
            f"| {result['label']} | {result['strategy_steps_per_sec']:.0f} | "
            f"{result['none_steps_per_sec']:.0f} | {result['ratio']:.2f}x |"
        )
    print(json.dumps({"results": results, "cpu_count": os.cpu_count()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
