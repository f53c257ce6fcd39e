"""v1 AdamOptimizer updates made inline against TensorFlow's fused kernel.

For MLPs 4-W-W-3 of several widths W (batch 32, v1 ``AdamOptimizer``,
default ``RunConfig``), two Estimators in one process train the same model:
one as keras_estimator runs it (in models of fewer than
``_v1_adam.MAX_UPDATED_ELEMENTS`` elements, every update made by elementwise
ops; in larger ones by TensorFlow's ``ResourceApplyAdam`` kernel), one with
every update left to the kernel (what TensorFlow does by itself). Each width is timed in
back-to-back pairs of ``train(steps=N)`` calls, alternating which goes
first; the ratio reported is the median of the pairs' ratios, with the
lowest and highest pair::

    python benchmarks/bench_v1_adam.py [--widths 64 128 256 384 512] [--pairs 5]

The last line of stdout is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

BATCH_SIZE = 32
LEARNING_RATE = 1e-3


def _log(message: str) -> None:
    print(f"[bench_v1_adam] {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _kernel_only(v1_adam: Any) -> Iterator[None]:
    """Leaves every Adam update to TensorFlow's kernel while traces are made."""
    saved = v1_adam.MAX_UPDATED_ELEMENTS
    v1_adam.MAX_UPDATED_ELEMENTS = 0
    try:
        yield
    finally:
        v1_adam.MAX_UPDATED_ELEMENTS = saved


def bench_width(width: int, steps: int, pairs: int) -> dict[str, Any]:
    import numpy as np
    import tensorflow as tf

    import keras_estimator as ke
    from keras_estimator._src.engine import v1_adam as _v1_adam

    rng = np.random.default_rng(0)
    x = rng.standard_normal((4096, 4), dtype=np.float32)
    y = np.argmax(x @ rng.standard_normal((4, 3), dtype=np.float32), axis=1).astype(
        np.int32
    )

    def model_fn(features, labels, mode):
        net = features["x"]
        for _ in range(2):
            net = ke.compat.layers.dense(net, width, activation=tf.nn.relu)
        logits = ke.compat.layers.dense(net, 3)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.compat.v1.train.AdamOptimizer(LEARNING_RATE).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(BATCH_SIZE)

    def traced_as(name: str) -> Any:
        # Only traces read the setting; every call of the kernel side is
        # wrapped, so that any trace it makes leaves updates to the kernel.
        return _kernel_only(_v1_adam) if name == "kernel" else contextlib.nullcontext()

    estimators = {}
    with tempfile.TemporaryDirectory(prefix="bench_v1_adam_") as root:
        for name in ("inline", "kernel"):
            with traced_as(name):
                estimator = ke.Estimator(model_fn, model_dir=os.path.join(root, name))
                estimator.train(input_fn, steps=50)
            estimators[name] = estimator
        rates: dict[str, list[float]] = {"inline": [], "kernel": []}
        for index in range(pairs):
            order = ("inline", "kernel") if index % 2 == 0 else ("kernel", "inline")
            for name in order:
                with traced_as(name):
                    start = time.perf_counter()
                    estimators[name].train(input_fn, steps=steps)
                    rates[name].append(steps / (time.perf_counter() - start))
    ratios = [a / b for a, b in zip(rates["inline"], rates["kernel"], strict=True)]
    result = {
        "width": width,
        "model_elements": 4 * width + width + width * width + width + width * 3 + 3,
        "ours_steps_per_sec": statistics.median(rates["inline"]),
        "kernel_steps_per_sec": statistics.median(rates["kernel"]),
        "ratio": statistics.median(ratios),
        "ratio_low": min(ratios),
        "ratio_high": max(ratios),
    }
    _log(f"width {width}: ours/kernel {result['ratio']:.2f}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--widths", type=int, nargs="+", default=[64, 128, 256, 384, 512]
    )
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument(
        "--step-seconds",
        type=float,
        default=1.0,
        help="rough length of each timed train() call (steps are sized from a probe)",
    )
    args = parser.parse_args(argv)
    from keras_estimator._src.engine import v1_adam as _v1_adam

    results = []
    for width in args.widths:
        # Roughly `--step-seconds` of work per call: bigger models, fewer steps.
        steps = max(200, int(args.step_seconds * 6e5 / (width * width + 4000)))
        results.append(bench_width(width, steps, args.pairs))
    print(
        f"\nv1 AdamOptimizer, MLP 4-W-W-3, batch {BATCH_SIZE}; inline below "
        f"{_v1_adam.MAX_UPDATED_ELEMENTS:,} elements in all"
    )
    print(f"{'W':>6} {'elements':>12} {'ours st/s':>12} {'kernel st/s':>12}  ratio (pairs)")
    for r in results:
        print(
            f"{r['width']:>6} {r['model_elements']:>12,} "
            f"{r['ours_steps_per_sec']:>12.0f} {r['kernel_steps_per_sec']:>12.0f}  "
            f"{r['ratio']:.2f}x ({r['ratio_low']:.2f} - {r['ratio_high']:.2f})"
        )
    print(json.dumps({"results": results, "pairs": args.pairs}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
