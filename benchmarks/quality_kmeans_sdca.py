"""KMeans and LinearSDCA: quality and speed, tf.estimator 2.15 against keras_estimator.

Each round runs the same worker twice, one process each: with TF 2.15.1 +
tensorflow-estimator 2.15.0 in the reference venv (`_ref_venv.py`; set
KERAS_ESTIMATOR_REF_VENV to reuse one), and here after
`keras_estimator.install()` (which goes first alternates by round). Per case
it times `train(steps=N)` after a warm-up of `--warmup-steps`, then reports
the quality at equal steps:

* KMeans, full batch (Lloyd), k-means++, k=3 on iris's four measurements
  (all 150 rows every step): the score (inertia: the sum of squared
  distances to the nearest centre) over the data, and the purity of the
  clusters against the species;
* KMeans, mini-batch (batches of 16, shuffled, random initialisation), same
  data and measures.

Both KMeans runs use the default RunConfig, so both implementations seed the
initialisation with TF1's default graph seed (2.15 ignored `seed`) and
choose the same initial centres; 2.15 then trains from the next batch, this
package from the batch it initialised from.
* LinearClassifier with `LinearSDCA` (l2 = 1) on breast cancer (30
  standardized features, 455 training rows, 114 held out, batches of 64):
  held-out accuracy and average loss;
* LinearRegressor with `LinearSDCA` (l2 = 1) on diabetes (10 standardized
  features, target / 100, 353 training rows, 89 held out, batches of 64):
  held-out average loss.

    python benchmarks/quality_kmeans_sdca.py [--train-steps 1000] [--rounds 3]

Prints a markdown table of medians over rounds and the ratio ours / 2.15 of
train steps per second (each ratio taken within a round), then one JSON line.
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
from _runner import worker_rounds  # noqa: E402

IRIS = REPO / "keras_estimator" / "data" / "iris.csv"
DATA = HERE.parent / "data"  # scikit-learn's copies of the UCI sets (BSD-3-Clause)

def _classes(tf):
    """KMeans and LinearSDCA as the installed `tf.estimator` spells them.

    Until keras_estimator exports them publicly, its private classes stand in.
    """
    try:
        return (
            tf.compat.v1.estimator.experimental.KMeans,
            tf.estimator.experimental.LinearSDCA,
        )
    except AttributeError:
        from keras_estimator._src.canned.kmeans import KMeans
        from keras_estimator._src.canned.linear_sdca import LinearSDCA

        return KMeans, LinearSDCA


def worker(train_steps: int, warmup_steps: int) -> dict:
    """Runs in either implementation; `tf.estimator` is whichever is installed."""
    import numpy as np
    import tensorflow as tf

    KMeans, LinearSDCA = _classes(tf)
    iris = np.loadtxt(IRIS, delimiter=",", skiprows=1, dtype=np.float32)
    points, species = iris[:, :4], iris[:, 4].astype(np.int64)

    def standardized(table):
        table = table[np.random.RandomState(0).permutation(len(table))]
        train = table[: int(0.8 * len(table))]
        return (table - train.mean(0)) / train.std(0)

    cancer = np.loadtxt(
        DATA / "breast_cancer.csv", delimiter=",", skiprows=1, dtype=np.float32
    )
    cancer_x = standardized(cancer[:, :30])
    cancer_y = cancer[np.random.RandomState(0).permutation(len(cancer)), 30].astype(
        np.int64
    )
    diabetes_x = standardized(
        np.loadtxt(DATA / "diabetes_data_raw.csv.gz", dtype=np.float32)
    )
    diabetes_y = np.loadtxt(DATA / "diabetes_target.csv.gz", dtype=np.float32)
    diabetes_y = (
        diabetes_y[np.random.RandomState(0).permutation(len(diabetes_y))] / 100.0
    )

    def timed(estimator, train_input):
        estimator.train(train_input, steps=warmup_steps)
        start = time.perf_counter()
        estimator.train(train_input, steps=train_steps)
        return train_steps / (time.perf_counter() - start)

    def kmeans_quality(km):
        centres = km.cluster_centers()
        squared = ((points[:, None] - centres[None]) ** 2).sum(-1)
        assigned = squared.argmin(1)
        purity = sum(np.bincount(species[assigned == k]).max() for k in set(assigned))
        everything = lambda: tf.data.Dataset.from_tensors({"x": points})  # noqa: E731
        return {
            "score": float(km.score(everything)),
            "numpy inertia": float(squared.min(1).sum()),
            "purity": purity / len(points),
        }

    results = {}
    full = KMeans(
        3,
        model_dir=tempfile.mkdtemp(),
        initial_clusters="kmeans_plus_plus",
        use_mini_batch=False,
        seed=1,
    )
    rate = timed(full, lambda: tf.data.Dataset.from_tensors({"x": points}).repeat())
    results["KMeans full batch (iris)"] = {
        "train_steps_per_sec": rate,
        **kmeans_quality(full),
    }

    mini = KMeans(3, model_dir=tempfile.mkdtemp(), seed=1)
    rate = timed(
        mini,
        lambda: (
            tf.data.Dataset.from_tensor_slices({"x": points})
            .shuffle(150, seed=1)
            .repeat()
            .batch(16)
        ),
    )
    results["KMeans mini-batch 16 (iris)"] = {
        "train_steps_per_sec": rate,
        **kmeans_quality(mini),
    }

    def sdca_case(make, x, y, metrics):
        n_train = int(0.8 * len(y))
        ids = np.array([str(i).encode() for i in range(len(y))])

        def features(start, stop):
            return {"x": x[start:stop], "id": ids[start:stop]}

        def train_input():
            data = tf.data.Dataset.from_tensor_slices(
                (features(0, n_train), y[:n_train])
            )
            return data.shuffle(n_train, seed=1).repeat().batch(64)

        def eval_input():
            return tf.data.Dataset.from_tensor_slices(
                (features(n_train, len(y)), y[n_train:])
            ).batch(1000)

        estimator = make(tempfile.mkdtemp())
        rate = timed(estimator, train_input)
        evaluation = estimator.evaluate(eval_input)
        return {
            "train_steps_per_sec": rate,
            **{m: float(evaluation[m]) for m in metrics},
        }

    column = [tf.feature_column.numeric_column("x", shape=[cancer_x.shape[1]])]
    results["LinearClassifier + LinearSDCA (breast cancer)"] = sdca_case(
        lambda d: tf.estimator.LinearClassifier(
            column,
            model_dir=d,
            optimizer=LinearSDCA("id", symmetric_l2_regularization=1.0),
        ),
        cancer_x,
        cancer_y,
        ["accuracy", "average_loss"],
    )
    column = [tf.feature_column.numeric_column("x", shape=[diabetes_x.shape[1]])]
    results["LinearRegressor + LinearSDCA (diabetes)"] = sdca_case(
        lambda d: tf.estimator.LinearRegressor(
            column,
            model_dir=d,
            optimizer=LinearSDCA("id", symmetric_l2_regularization=1.0),
        ),
        diabetes_x,
        diabetes_y,
        ["average_loss"],
    )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-steps", type=int, default=1000)
    parser.add_argument("--warmup-steps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(args.train_steps, args.warmup_steps)))
        return 0

    rounds = worker_rounds(
        args.rounds,
        [HERE, "--worker", "--train-steps", args.train_steps, "--warmup-steps", args.warmup_steps],
    )

    print(
        f"{args.train_steps} train steps after {args.warmup_steps}; "
        f"medians of {args.rounds} rounds\n"
    )
    print(
        "| case | 2.15 steps/s | ours steps/s | ratio (range) | quality: 2.15 / ours |"
    )
    print("| --- | ---: | ---: | ---: | --- |")
    summary = {}
    for name in rounds[0]["ours"]:
        ratios = [
            r["ours"][name]["train_steps_per_sec"]
            / r["reference"][name]["train_steps_per_sec"]
            for r in rounds
        ]
        rates = {
            side: statistics.median(
                r[side][name]["train_steps_per_sec"] for r in rounds
            )
            for side in ("reference", "ours")
        }
        metrics = [k for k in rounds[0]["ours"][name] if k != "train_steps_per_sec"]
        quality = {
            metric: {
                side: statistics.median(r[side][name][metric] for r in rounds)
                for side in ("reference", "ours")
            }
            for metric in metrics
        }
        text = "; ".join(
            f"{m} {q['reference']:.4g} / {q['ours']:.4g}" for m, q in quality.items()
        )
        ratio = statistics.median(ratios)
        print(
            f"| {name} | {rates['reference']:,.0f} | {rates['ours']:,.0f} | "
            f"{ratio:.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) | {text} |"
        )
        summary[name] = {
            "ratio": ratio,
            "ratios": ratios,
            "steps_per_sec": rates,
            "quality": quality,
        }
    print(
        json.dumps(
            {"train_steps": args.train_steps, "results": summary, "rounds": rounds}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
