"""BoostedTrees side by side: tf.estimator 2.8 against keras_estimator's ydf-grown forest.

TensorFlow 2.15+ has no BoostedTrees kernels, so the reference is
tensorflow-cpu 2.8.4 + tensorflow-estimator 2.8.0 in its own venv
(`_ref_venv_28.py`; set KERAS_ESTIMATOR_REF_VENV_28 to reuse one). Each round
runs the same worker function twice, one process each: there with
`tf.estimator.BoostedTrees*`, here with keras_estimator's classes (which goes
first alternates by round). The same tree settings on both sides: 100 trees
of depth 6, learning rate 0.1, one batch per layer holding every training
row, on the bundled data split as `bench_premade.py` splits it (a fixed
permutation; the last 20% held out):

* BoostedTreesClassifier on breast cancer (30 features, 455 training rows,
  114 held out): held-out accuracy and AUC;
* BoostedTreesRegressor on diabetes (10 features, target / 100, 353
  training rows, 89 held out): held-out average loss.

Timed: `train()` until the forest is complete (2.8 stops by itself once
n_trees are grown). Here the worker then exports a SavedModel and serves
the held-out rows from it in a fresh TF 2.21 process that imports neither
ydf nor keras_estimator; the largest difference from `predict()` is
reported.

    python benchmarks/bench_boosted_trees.py [--rounds 3]

Prints a markdown table of medians over rounds (ratio = 2.8 train time /
ours, each taken within a round), then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from _runner import alternating_rounds, run_json  # noqa: E402

TREES = {"n_trees": 100, "max_depth": 6, "learning_rate": 0.1}


def load_cases():
    """`{name: (features, labels, n_train)}` of the two data sets, permuted."""
    import numpy as np

    cancer = np.loadtxt(
        DATA / "breast_cancer.csv", delimiter=",", skiprows=1, dtype=np.float32
    )
    cancer = cancer[np.random.RandomState(0).permutation(len(cancer))]
    diabetes_x = np.loadtxt(DATA / "diabetes_data_raw.csv.gz", dtype=np.float32)
    diabetes_y = np.loadtxt(DATA / "diabetes_target.csv.gz", dtype=np.float32) / 100.0
    order = np.random.RandomState(0).permutation(len(diabetes_y))
    return {
        "classifier (breast cancer)": (
            {"x": cancer[:, :30]},
            cancer[:, 30].astype(np.int64),
            int(0.8 * len(cancer)),
        ),
        "regressor (diabetes)": (
            {"x": diabetes_x[order]},
            diabetes_y[order],
            int(0.8 * len(diabetes_y)),
        ),
    }


def worker(ours: bool) -> dict:
    import tensorflow as tf

    if ours:
        from keras_estimator._src.canned import boosted_trees as module

        classes = {
            "classifier": module.BoostedTreesClassifier,
            "regressor": module.BoostedTreesRegressor,
        }
    else:
        classes = {
            "classifier": tf.estimator.BoostedTreesClassifier,
            "regressor": tf.estimator.BoostedTreesRegressor,
        }
    results = {}
    for name, (features, labels, n_train) in load_cases().items():
        width = features["x"].shape[1]
        columns = [tf.feature_column.numeric_column("x", shape=(width,))]

        def train_input(features=features, labels=labels, n_train=n_train):
            rows = ({"x": features["x"][:n_train]}, labels[:n_train])
            return tf.data.Dataset.from_tensor_slices(rows).batch(n_train).repeat()

        def held_out(features=features, labels=labels, n_train=n_train):
            rows = ({"x": features["x"][n_train:]}, labels[n_train:])
            return tf.data.Dataset.from_tensor_slices(rows).batch(len(labels))

        model_dir = tempfile.mkdtemp()
        kind = name.split()[0]
        est = classes[kind](
            columns, n_batches_per_layer=1, model_dir=model_dir, **TREES
        )
        start = time.perf_counter()
        est.train(train_input, max_steps=100_000)
        seconds = time.perf_counter() - start
        metrics = est.evaluate(held_out, steps=1)
        keys = ("accuracy", "auc") if kind == "classifier" else ("average_loss",)
        result = {"train_seconds": seconds, **{k: float(metrics[k]) for k in keys}}
        if ours:
            result["served_max_abs_diff"] = served_difference(
                est, features, n_train, columns
            )
        results[name] = result
    return results


def served_difference(est, features, n_train, columns) -> float:
    """Largest |served - predict()| over the held-out rows, served in a fresh TF."""
    import numpy as np
    import tensorflow as tf

    from keras_estimator._src.base.serving_input import (
        build_raw_serving_input_receiver_fn,
    )

    rows = features["x"][n_train:]
    receiver = build_raw_serving_input_receiver_fn(
        {"x": tf.TensorSpec([None, rows.shape[1]], tf.float32)}
    )
    export_dir = est.export_saved_model(tempfile.mkdtemp(), receiver).decode()
    key = "logits" if "class" in type(est).__name__.lower() else "predictions"
    expected = np.stack(
        [
            p[key]
            for p in est.predict(
                lambda: tf.data.Dataset.from_tensor_slices({"x": rows}).batch(64)
            )
        ]
    )
    folder = tempfile.mkdtemp()
    np.save(os.path.join(folder, "rows.npy"), rows)
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["ydf"] = None
        sys.modules["keras_estimator"] = None
        import numpy as np, tensorflow as tf
        rows = np.load({os.path.join(folder, "rows.npy")!r})
        served = tf.saved_model.load({export_dir!r}).signatures["predict"](x=tf.constant(rows))
        np.save({os.path.join(folder, "served.npy")!r}, served[{key!r}].numpy())
        """
    )
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    subprocess.run([sys.executable, "-c", script], check=True, env=env)
    served = np.load(os.path.join(folder, "served.npy"))
    return float(np.abs(served - expected).max())


def _run(python: str, ours: bool) -> dict:
    return run_json(
        [python, __file__, "--worker"] + (["--ours"] if ours else []),
        "ours" if ours else "2.8",
        marker="RESULT ",
        quiet=True,
        env={"TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(HERE.parent)},
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--ours", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(args.ours)))
        return 0

    import _ref_venv_28

    reference = _ref_venv_28.ensure_reference_python()
    rounds = alternating_rounds(
        args.rounds,
        ("reference", "ours"),
        lambda side: _run(sys.executable if side == "ours" else reference, side == "ours"),
    )

    print(f"{TREES}, medians of {args.rounds} rounds\n")
    print(
        "| case | metric | tf.estimator 2.8 | ours (ydf) | train s 2.8 | train s ours "
        "| speed-up | served vs predict |"
    )
    print("|---|---|---|---|---|---|---|---|")
    summary = {}
    for name in rounds[0]["ours"]:

        def median(side, key, name=name):
            return statistics.median(r[side][name][key] for r in rounds)

        ratios = [
            r["reference"][name]["train_seconds"] / r["ours"][name]["train_seconds"]
            for r in rounds
        ]
        metrics = [
            k
            for k in rounds[0]["ours"][name]
            if k not in ("train_seconds", "served_max_abs_diff")
        ]
        shown = ", ".join(metrics)
        ref_values = ", ".join(f"{median('reference', k):.4f}" for k in metrics)
        our_values = ", ".join(f"{median('ours', k):.4f}" for k in metrics)
        served = max(r["ours"][name]["served_max_abs_diff"] for r in rounds)
        print(
            f"| {name} | {shown} | {ref_values} | {our_values} "
            f"| {median('reference', 'train_seconds'):.2f} "
            f"| {median('ours', 'train_seconds'):.3f} "
            f"| {statistics.median(ratios):.0f}x ({min(ratios):.0f}-{max(ratios):.0f}) "
            f"| {served:.1e} |"
        )
        summary[name] = {"speedups": ratios, "served_max_abs_diff": served}
    print(json.dumps({"trees": TREES, "results": summary, "rounds": rounds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
