"""train_and_evaluate with a BestExporter, then serving the export in a fresh process.

Run: python examples/train_and_evaluate_best_exporter.py [--steps N] [--model-dir DIR]

`train_and_evaluate` trains an iris model_fn (TrainSpec), evaluates every new
checkpoint (EvalSpec with throttle_secs=0), and after each evaluation a
`BestExporter` exports a SavedModel if the evaluation loss is the lowest so
far (keeping the best two). The newest export is then served by a separate
Python process that imports plain TensorFlow only, no keras_estimator:
`tf.saved_model.load(path).signatures["serving_default"]`, as a serving job
would load it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from importlib import resources

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_estimator as estimator  # noqa: E402  (was: tf.estimator)
from keras_estimator.compat import layers  # noqa: E402  (was: tf.compat.v1.layers)

# Run by a fresh interpreter: plain TensorFlow, no keras_estimator import.
SERVE_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import tensorflow as tf

    export_dir, inputs = sys.argv[1], np.array(json.loads(sys.argv[2]), "float32")
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    outputs = serve(x=tf.constant(inputs))
    print(json.dumps({key: value.numpy().tolist() for key, value in outputs.items()}))
    """
)


def load_iris() -> tuple[np.ndarray, np.ndarray]:
    text = resources.files("keras_estimator").joinpath("data/iris.csv").read_text()
    rows = np.loadtxt(text.splitlines()[1:], delimiter=",", dtype="float32")
    return rows[:, :4], rows[:, 4].astype("int32")


def model_fn(features, labels, mode, params):
    hidden = layers.dense(features["x"], 16, activation=tf.nn.relu)
    logits = layers.dense(hidden, 3)
    class_ids = tf.argmax(logits, axis=1)
    if mode == estimator.ModeKeys.PREDICT:
        return estimator.EstimatorSpec(
            mode,
            predictions={"class_ids": class_ids, "probabilities": tf.nn.softmax(logits)},
        )
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == estimator.ModeKeys.EVAL:
        return estimator.EstimatorSpec(
            mode, loss=loss,
            eval_metric_ops={"accuracy": tf.compat.v1.metrics.accuracy(labels, class_ids)},
        )
    train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def serving_input_receiver_fn():
    """Serving requests carry a float batch `x` of shape [None, 4]."""
    x = tf.compat.v1.placeholder(tf.float32, [None, 4], name="x")
    return estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600, help="TrainSpec max_steps")
    parser.add_argument("--model-dir", default=None, help="default: a new temp dir")
    parser.add_argument("--save-every", type=int, default=None,
                        help="save_checkpoints_steps (default: steps / 3)")
    args = parser.parse_args(argv)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="best_exporter_")

    x, y = load_iris()
    order = np.random.default_rng(0).permutation(len(y))
    train, test = order[:120], order[120:]

    def train_input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": x[train]}, y[train]))
        return data.shuffle(120, seed=0).repeat().batch(32)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x[test]}, y[test])).batch(30)

    config = estimator.RunConfig(
        tf_random_seed=42, save_checkpoints_steps=args.save_every or max(args.steps // 3, 1)
    )
    classifier = estimator.Estimator(model_fn, model_dir=model_dir, config=config)
    best_exporter = estimator.BestExporter(
        name="best", serving_input_receiver_fn=serving_input_receiver_fn,
        exports_to_keep=2,
    )
    train_spec = estimator.TrainSpec(train_input_fn, max_steps=args.steps)
    eval_spec = estimator.EvalSpec(
        eval_input_fn, steps=None, exporters=[best_exporter],
        start_delay_secs=0, throttle_secs=0,
    )
    metrics, exports = estimator.train_and_evaluate(classifier, train_spec, eval_spec)
    print(f"final evaluation: accuracy {metrics['accuracy']:.3f}, "
          f"loss {metrics['loss']:.3f}, global step {metrics['global_step']}")

    export_base = os.path.join(model_dir, "export", "best")
    kept = sorted(os.listdir(export_base))
    print(f"BestExporter kept {len(kept)} export(s): {kept}")
    newest = os.path.join(export_base, kept[-1])

    # Serve the newest export in a new process with plain TensorFlow.
    samples = x[test[:5]]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    served = subprocess.run(
        [sys.executable, "-c", SERVE_SCRIPT, newest, json.dumps(samples.tolist())],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )
    if served.returncode != 0:
        print(served.stderr, file=sys.stderr)
        return served.returncode
    outputs = json.loads(served.stdout.strip().splitlines()[-1])
    probabilities = np.array(outputs["probabilities"])
    print(f"served {newest} in a fresh process")
    print(f"served probabilities shape: {probabilities.shape}")
    print(f"served class_ids: {outputs['class_ids']} (true {y[test[:5]].tolist()})")

    # The same checkpoint through Estimator.predict gives the same classes.
    predicted = [int(p["class_ids"]) for p in classifier.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": samples}).batch(5))]
    print(f"Estimator.predict class_ids: {predicted}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
