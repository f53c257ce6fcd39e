"""Premade estimators side by side: tf.estimator 2.15 against keras_estimator.

Each round runs the same script twice, one process each: with plain
TensorFlow 2.15.1 + tensorflow-estimator 2.15.0 in the reference venv
(`_ref_venv.py`; set KERAS_ESTIMATOR_REF_VENV to reuse one), and here after
`keras_estimator.install()`, so the code is the same `tf.estimator.*` calls
(which goes first alternates by round). Per estimator it times
`train(steps=N)` after a 200-step warm-up, and reports the evaluation metric
at equal steps on held-out rows (the last 20%) of the bundled data:

* DNNClassifier, hidden_units [30, 10], 3 classes: accuracy;
* DNNRegressor, hidden_units [16], petal width from the other three
  measurements: average loss;
* LinearClassifier and LinearRegressor (default Ftrl) on the same tasks;
* DNNLinearCombinedClassifier: a bucketized petal length in the linear
  part, the four measurements in the network ([30, 10], Adam);
* BaselineRegressor: the mean petal width (given one feature: with the
  three measurements, 2.15's BaselineRegressor stops at "GetNext() failed
  because the iterator has not been initialized");
* tf.compat.v1.estimator.DNNClassifier ([30, 10], Adam, summed loss);
* on breast cancer (30 standardized features, 455 training rows, 114
  held out): LinearClassifier and DNNClassifier ([64, 32], Adam);
* on diabetes (10 standardized features, target / 100, 353 training rows,
  89 held out): LinearRegressor and DNNLinearCombinedRegressor (both parts
  over the ten features, network [32, 16] with Adam).

The DNN ones use optimizer 'Adam'. With the default Adagrad at 0.001, a few
thousand steps leave these unscaled inputs under-trained, and the metric
then depends on the initial weights, which differ between the two
TensorFlow versions (DNNRegressor over seeds 1-5, 3200 steps: 2.15 gave
average losses 0.17 to 12.1, this package 0.07 to 0.25).

    python benchmarks/bench_premade.py [--train-steps 3000] [--rounds 3]

Prints a table of medians over rounds and the ratio ours / 2.15 of train
steps per second (each ratio taken within a round), then one JSON line.
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
WARMUP_STEPS = 200

def worker(train_steps: int) -> dict:
    """Runs in either implementation; `tf.estimator` is whichever is installed."""
    import numpy as np
    import tensorflow as tf

    rows = np.loadtxt(IRIS, delimiter=",", skiprows=1, dtype=np.float32)
    rows = rows[np.random.RandomState(0).permutation(len(rows))]
    names = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    x = {name: rows[:, i] for i, name in enumerate(names)}
    classes = rows[:, 4].astype(np.int64)

    def standardized(table):
        table = table[np.random.RandomState(0).permutation(len(table))]
        train = table[: int(0.8 * len(table))]
        return (table - train.mean(0)) / train.std(0)

    cancer = np.loadtxt(DATA / "breast_cancer.csv", delimiter=",", skiprows=1, dtype=np.float32)
    cancer_x = standardized(cancer[:, :30])
    cancer_y = cancer[np.random.RandomState(0).permutation(len(cancer)), 30].astype(np.int64)
    diabetes_raw = np.loadtxt(DATA / "diabetes_data_raw.csv.gz", dtype=np.float32)
    diabetes_y = np.loadtxt(DATA / "diabetes_target.csv.gz", dtype=np.float32)
    diabetes_x = standardized(diabetes_raw)
    diabetes_y = diabetes_y[np.random.RandomState(0).permutation(len(diabetes_y))] / 100.0

    def dataset(features, labels, start, stop, training):
        data = tf.data.Dataset.from_tensor_slices(
            ({k: v[start:stop] for k, v in features.items()}, labels[start:stop])
        )
        return data.shuffle(stop - start, seed=1).repeat().batch(16) if training else data.batch(30)

    results = {}
    cancer_features = {"x": cancer_x}
    diabetes_features = {"x": diabetes_x}
    regression_x = {k: v for k, v in x.items() if k != "petal_width"}
    cases = {
        "DNNClassifier": (
            lambda d: tf.estimator.DNNClassifier(
                hidden_units=[30, 10],
                feature_columns=[tf.feature_column.numeric_column(n) for n in names],
                n_classes=3,
                optimizer="Adam",
                model_dir=d,
                config=tf.estimator.RunConfig(tf_random_seed=1),
            ),
            x,
            classes,
            "accuracy",
        ),
        "DNNRegressor": (
            lambda d: tf.estimator.DNNRegressor(
                hidden_units=[16],
                feature_columns=[tf.feature_column.numeric_column(n) for n in regression_x],
                optimizer="Adam",
                model_dir=d,
                config=tf.estimator.RunConfig(tf_random_seed=1),
            ),
            regression_x,
            x["petal_width"],
            "average_loss",
        ),
        "LinearClassifier": (
            lambda d: tf.estimator.LinearClassifier(
                feature_columns=[tf.feature_column.numeric_column(n) for n in names],
                n_classes=3,
                model_dir=d,
                config=tf.estimator.RunConfig(tf_random_seed=1),
            ),
            x,
            classes,
            "accuracy",
        ),
        "LinearRegressor": (
            lambda d: tf.estimator.LinearRegressor(
                feature_columns=[tf.feature_column.numeric_column(n) for n in regression_x],
                model_dir=d,
                config=tf.estimator.RunConfig(tf_random_seed=1),
            ),
            regression_x,
            x["petal_width"],
            "average_loss",
        ),
        "DNNLinearCombinedClassifier": (
            lambda d: tf.estimator.DNNLinearCombinedClassifier(
                linear_feature_columns=[
                    tf.feature_column.bucketized_column(
                        tf.feature_column.numeric_column("petal_length"), [2.5, 5.0]
                    )
                ],
                dnn_feature_columns=[tf.feature_column.numeric_column(n) for n in names],
                dnn_hidden_units=[30, 10],
                dnn_optimizer="Adam",
                n_classes=3,
                model_dir=d,
                config=tf.estimator.RunConfig(tf_random_seed=1),
            ),
            x,
            classes,
            "accuracy",
        ),
        "BaselineRegressor": (
            lambda d: tf.estimator.BaselineRegressor(
                model_dir=d, config=tf.estimator.RunConfig(tf_random_seed=1)
            ),
            {"petal_length": x["petal_length"]},
            x["petal_width"],
            "average_loss",
        ),
        "LinearClassifier (cancer)": (
            lambda d: tf.estimator.LinearClassifier(
                feature_columns=[tf.feature_column.numeric_column("x", shape=[30])],
                model_dir=d,
                config=tf.estimator.RunConfig(tf_random_seed=1),
            ),
            cancer_features,
            cancer_y,
            "accuracy",
        ),
        "DNNClassifier (cancer)": (
            lambda d: tf.estimator.DNNClassifier(
                hidden_units=[64, 32],
                feature_columns=[tf.feature_column.numeric_column("x", shape=[30])],
                optimizer="Adam",
                model_dir=d,
                config=tf.estimator.RunConfig(tf_random_seed=1),
            ),
            cancer_features,
            cancer_y,
            "accuracy",
        ),
        "LinearRegressor (diabetes)": (
            lambda d: tf.estimator.LinearRegressor(
                feature_columns=[tf.feature_column.numeric_column("x", shape=[10])],
                model_dir=d,
                config=tf.estimator.RunConfig(tf_random_seed=1),
            ),
            diabetes_features,
            diabetes_y,
            "average_loss",
        ),
        "DNNLinearCombinedRegressor (diabetes)": (
            lambda d: tf.estimator.DNNLinearCombinedRegressor(
                linear_feature_columns=[tf.feature_column.numeric_column("x", shape=[10])],
                dnn_feature_columns=[tf.feature_column.numeric_column("x", shape=[10])],
                dnn_hidden_units=[32, 16],
                dnn_optimizer="Adam",
                model_dir=d,
                config=tf.estimator.RunConfig(tf_random_seed=1),
            ),
            diabetes_features,
            diabetes_y,
            "average_loss",
        ),
        "v1 DNNClassifier": (
            lambda d: tf.compat.v1.estimator.DNNClassifier(
                hidden_units=[30, 10],
                feature_columns=[tf.feature_column.numeric_column(n) for n in names],
                n_classes=3,
                optimizer="Adam",
                model_dir=d,
                config=tf.estimator.RunConfig(tf_random_seed=1),
            ),
            x,
            classes,
            "accuracy",
        ),
    }
    for name, (make, features, labels, metric) in cases.items():
        estimator = make(tempfile.mkdtemp())

        n_train = int(0.8 * len(labels))  # iris: 120 of 150 rows

        def train_input(features=features, labels=labels, n_train=n_train):
            return dataset(features, labels, 0, n_train, True)

        def eval_input(features=features, labels=labels, n_train=n_train):
            return dataset(features, labels, n_train, len(labels), False)

        estimator.train(train_input, steps=WARMUP_STEPS)
        start = time.perf_counter()
        estimator.train(train_input, steps=train_steps)
        seconds = time.perf_counter() - start
        evaluation = estimator.evaluate(eval_input)
        results[name] = {
            "train_steps_per_sec": train_steps / seconds,
            metric: float(evaluation[metric]),
            "global_step": int(evaluation["global_step"]),
        }
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-steps", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(args.train_steps)))
        return 0

    rounds = worker_rounds(
        args.rounds,
        [HERE, "--worker", "--train-steps", args.train_steps],
    )

    print(f"{args.train_steps} train steps after {WARMUP_STEPS}; medians of {args.rounds} rounds")
    print(f"{'estimator':<38} {'2.15 steps/s':>13} {'ours steps/s':>13} {'ratio':>16}   metric")
    summary = {}
    for name in rounds[0]["ours"]:
        metric = next(k for k in rounds[0]["ours"][name] if k not in (
            "train_steps_per_sec", "global_step"))
        ratios = [r["ours"][name]["train_steps_per_sec"] / r["reference"][name][
            "train_steps_per_sec"] for r in rounds]
        ref_rate = statistics.median(r["reference"][name]["train_steps_per_sec"] for r in rounds)
        our_rate = statistics.median(r["ours"][name]["train_steps_per_sec"] for r in rounds)
        ref_metric = statistics.median(r["reference"][name][metric] for r in rounds)
        our_metric = statistics.median(r["ours"][name][metric] for r in rounds)
        ratio = statistics.median(ratios)
        print(
            f"{name:<38} {ref_rate:>13,.0f} {our_rate:>13,.0f} "
            f"{ratio:>6.2f}x ({min(ratios):.2f}-{max(ratios):.2f})   "
            f"{metric} 2.15 {ref_metric:.4f}, ours {our_metric:.4f}"
        )
        summary[name] = {"ratio": ratio, "ratios": ratios, "metric": metric,
                         "reference_metric": ref_metric, "ours_metric": our_metric,
                         "reference_steps_per_sec": ref_rate, "ours_steps_per_sec": our_rate}
    print(json.dumps({"train_steps": args.train_steps, "results": summary, "rounds": rounds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
