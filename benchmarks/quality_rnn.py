"""RNNClassifier side by side: tf.estimator 2.15 against keras_estimator.

The same worker runs twice, one process each: under TensorFlow 2.15.1 +
tensorflow-estimator 2.15.0 in the reference venv (`_ref_venv.py`; set
KERAS_ESTIMATOR_REF_VENV to reuse one) with
`tf.estimator.experimental.RNNClassifier`, and here with keras_estimator's.
Same generated data (fixed seed), same arguments, same batches in the same
order. Two problems on variable-length sequences (3 to 12 steps; 2,000
training and 500 held-out sequences; batch 32):

* `sum_sign`: is the sum of a sequence of normal numbers positive?
  `sequence_numeric_column`, `units=[16]` (SimpleRNN cells), the default
  optimizer (Adagrad at 0.05, gradients clipped to norm 5);
* `token_count`: does token 7 appear fewer times, as many times, or more
  times than token 3 (3 classes) in a sequence of tokens 0-9? An embedding
  (dimension 4) of a
  `sequence_categorical_column_with_identity`, `units=16, cell_type='lstm'`,
  optimizer 'Adam'.

Per problem and implementation: a warm-up `train()` of 100 steps (traces the
graph), then `train(steps=N)` timed, then `evaluate()` on the held-out
sequences (accuracy and average loss).

    python benchmarks/quality_rnn.py [--train-steps 1500]

Prints a markdown table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))

TRAIN_ROWS, TEST_ROWS, BATCH, WARMUP_STEPS = 2000, 500, 32, 100


def make_data(seed: int = 0):
    """`(values, tokens, sum_sign, token_count)` per sequence, as lists of arrays."""
    import numpy as np

    rng = np.random.RandomState(seed)
    rows = TRAIN_ROWS + TEST_ROWS
    lengths = rng.randint(3, 13, size=rows)
    values = [rng.normal(size=n).astype(np.float32) for n in lengths]
    tokens = [rng.randint(0, 10, size=n).astype(np.int64) for n in lengths]
    sum_sign = np.array([v.sum() > 0 for v in values], np.int64)
    token_count = np.array(
        [np.sign((t == 7).sum() - (t == 3).sum()) + 1 for t in tokens], np.int64
    )
    return values, tokens, sum_sign, token_count


PROBLEMS = {
    "sum_sign": dict(key="x", labels=2, args=dict(units=[16])),
    "token_count": dict(
        key="tok", labels=3, args=dict(units=16, cell_type="lstm", optimizer="Adam")
    ),
}


def worker(implementation: str, train_steps: int) -> dict:
    """Trains and evaluates every problem with one implementation."""
    import numpy as np
    import tensorflow as tf

    if implementation == "tf215":
        classifier, run_config = (
            tf.estimator.experimental.RNNClassifier,
            tf.estimator.RunConfig,
        )
    else:
        import keras_estimator as ke
        from keras_estimator._src.canned import rnn

        classifier, run_config = rnn.RNNClassifier, ke.RunConfig

    values, tokens, sum_sign, token_count = make_data()
    fc = tf.feature_column
    results = {}
    for name, problem in PROBLEMS.items():
        sequences = values if problem["key"] == "x" else tokens
        labels = sum_sign if name == "sum_sign" else token_count
        if problem["key"] == "x":
            column = fc.sequence_numeric_column("x")
        else:
            column = fc.embedding_column(
                fc.sequence_categorical_column_with_identity("tok", 10), 4
            )

        def input_fn(
            start,
            stop,
            training,
            sequences=sequences,
            labels=labels,
            key=problem["key"],
        ):
            def make():
                ragged = tf.ragged.constant(sequences[start:stop])
                dataset = tf.data.Dataset.from_tensor_slices(
                    (ragged, labels[start:stop, None])
                )
                dataset = dataset.repeat() if training else dataset
                return dataset.batch(BATCH).map(lambda x, y: ({key: x.to_sparse()}, y))

            return make

        est = classifier(
            [column],
            n_classes=problem["labels"],
            model_dir=tempfile.mkdtemp(),
            config=run_config(tf_random_seed=1, save_checkpoints_steps=10**9),
            **problem["args"],
        )
        train = input_fn(0, TRAIN_ROWS, True)
        est.train(train, steps=WARMUP_STEPS)
        start = time.perf_counter()
        est.train(train, steps=train_steps)
        seconds = time.perf_counter() - start
        metrics = est.evaluate(input_fn(TRAIN_ROWS, TRAIN_ROWS + TEST_ROWS, False))
        results[name] = {
            "accuracy": float(metrics["accuracy"]),
            "average_loss": float(metrics["average_loss"]),
            "steps_per_second": train_steps / seconds,
        }
    del np
    return results


def run(python: str, implementation: str, train_steps: int) -> dict:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=str(REPO))
    command = [
        python,
        str(HERE),
        "--worker",
        implementation,
        "--train-steps",
        str(train_steps),
    ]
    completed = subprocess.run(
        command, env=env, capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        raise RuntimeError(
            f"{implementation} worker failed:\n{completed.stderr[-3000:]}"
        )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train-steps", type=int, default=1500)
    parser.add_argument("--worker", choices=["tf215", "ours"])
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.train_steps)))
        return
    from _ref_venv import ensure_reference_python

    reference = run(str(ensure_reference_python()), "tf215", args.train_steps)
    ours = run(sys.executable, "ours", args.train_steps)
    print(
        f"RNNClassifier, {args.train_steps} steps after {WARMUP_STEPS} warm-up, batch {BATCH}\n"
    )
    print(
        "| problem | accuracy 2.15 | accuracy ours | avg loss 2.15 | avg loss ours "
        "| steps/s 2.15 | steps/s ours | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in PROBLEMS:
        a, b = reference[name], ours[name]
        print(
            f"| {name} | {a['accuracy']:.3f} | {b['accuracy']:.3f} | {a['average_loss']:.4f} "
            f"| {b['average_loss']:.4f} | {a['steps_per_second']:.0f} "
            f"| {b['steps_per_second']:.0f} "
            f"| {b['steps_per_second'] / a['steps_per_second']:.2f}x |"
        )
    print(
        json.dumps({"train_steps": args.train_steps, "tf215": reference, "ours": ours})
    )


if __name__ == "__main__":
    main()
