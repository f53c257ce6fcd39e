"""Resident memory and open file descriptors over many Estimators in one process.

Builds ``--estimators`` Estimators one after the other, each with its own
model_dir: an MLP 4-W-W-3 (v1 layers, v1 ``AdamOptimizer``, an L2 penalty
over ``tf.compat.v1.trainable_variables()``), ``train(steps=3)`` then
``evaluate(steps=1)``, then ``del`` and ``gc.collect()``. After each one it
records resident memory (after ``malloc_trim``, so freed heap pages do not
count) and the number of open descriptors::

    python benchmarks/bench_isolation.py [--estimators 50] [--width 640] [--keep]

With ``--keep`` the Estimators are kept alive instead (what a sweep that
keeps its Estimators in a list holds). Growth is measured from the third
Estimator (the first ones warm process-wide caches) to the last. The last
line of stdout is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import resource
import sys
import tempfile
import time
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WARM_UP = 2


def _log(message: str) -> None:
    print(f"[bench_isolation] {message}", file=sys.stderr, flush=True)


def resident_mb() -> float:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def make_model_fn(width: int) -> Any:
    import tensorflow as tf

    import keras_estimator as ke
    from keras_estimator.compat import layers

    def model_fn(features: Any, labels: Any, mode: str) -> Any:
        net = features["x"]
        for _ in range(2):
            net = layers.dense(net, width, activation=tf.nn.relu)
        logits = layers.dense(net, 3)
        penalty = tf.add_n([tf.nn.l2_loss(v) for v in tf.compat.v1.trainable_variables()])
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        loss += 1e-3 * penalty
        if mode == ke.ModeKeys.EVAL:
            return ke.EstimatorSpec(mode, loss=loss)
        train_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--estimators", type=int, default=50)
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--keep", action="store_true", help="keep every Estimator alive")
    args = parser.parse_args()

    import numpy as np
    import tensorflow as tf

    import keras_estimator as ke

    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 4), dtype=np.float32)
    y = rng.integers(0, 3, size=256).astype(np.int32)

    def input_fn() -> Any:
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(32)

    width = args.width
    parameters = 4 * width + width * width + width * 3 + 2 * width + 3
    model_mb = 3 * 4 * parameters / 2**20  # weights and Adam's two slots
    model_fn = make_model_fn(width)
    kept = []
    rows = []
    base = tempfile.mkdtemp(prefix="bench_isolation_")
    started = time.perf_counter()
    for index in range(args.estimators):
        est = ke.Estimator(model_fn, model_dir=os.path.join(base, str(index)))
        est.train(input_fn, steps=3)
        est.evaluate(input_fn, steps=1)
        if args.keep:
            kept.append(est)
        del est
        gc.collect()
        rows.append((resident_mb(), open_fds()))
        if index % 10 == 9 or index == args.estimators - 1:
            _log(f"{index + 1:3d} Estimators: RSS {rows[-1][0]:7.1f} MB, {rows[-1][1]} fds")
    elapsed = time.perf_counter() - started
    (rss_start, fds_start), (rss_end, fds_end) = rows[WARM_UP], rows[-1]
    counted = max(len(rows) - 1 - WARM_UP, 1)
    figures = {
        "estimators": args.estimators,
        "kept_alive": args.keep,
        "model_mb": round(model_mb, 2),
        "rss_mb_first": round(rows[0][0], 1),
        "rss_mb_start": round(rss_start, 1),
        "rss_mb_end": round(rss_end, 1),
        "rss_growth_mb": round(rss_end - rss_start, 1),
        "rss_growth_mb_per_estimator": round((rss_end - rss_start) / counted, 3),
        "fds_start": fds_start,
        "fds_end": fds_end,
        "fd_growth": fds_end - fds_start,
        "seconds": round(elapsed, 1),
    }
    print(
        f"model {model_mb:.1f} MB; RSS {rss_start:.1f} -> {rss_end:.1f} MB "
        f"({figures['rss_growth_mb_per_estimator']:+.3f} MB per Estimator over "
        f"{counted}); fds {fds_start} -> {fds_end}"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
