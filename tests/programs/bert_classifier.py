"""BERT fine-tuning with TPUEstimator on CPU (google-research/bert for TF 2.x), as published.

google-research/bert's run_classifier.py with modeling.py, optimization.py
and tokenization.py, in the TensorFlow 2 version of pull request #1035
("Updates to migrate to tf2.1", github.com/ultrons/bert, commit
ec45524664c0a594302ca0f1f57b6f3d438e0e9b, 2020-03-20): `import
tensorflow.compat.v1 as tf` in every file, tf.contrib.tpu ->
tf.estimator.tpu (so tf.compat.v1.estimator.tpu.TPUEstimator,
TPUEstimatorSpec, RunConfig, TPUConfig), tf.contrib.data.map_and_batch ->
tf.data.experimental.map_and_batch, and tf.contrib.layers.layer_norm
re-implemented with tf.compat.v1.get_variable under the same variable names.
The four files sit unchanged in tests/programs/bert_classifier/ (with the
repository's LICENSE); this script is the command line.

What runs: CoLA's file layout read by ColaProcessor,
file_based_convert_examples_to_features writing train/eval/predict
TFRecords, `tf.data.TFRecordDataset` + `map_and_batch` input_fns taking
`params["batch_size"]`, a model_fn building BertModel with
tf.compat.v1.layers.dense and get_variable, `tf.train.init_from_checkpoint`
from the pretrained checkpoint (use_tpu=False calls it in the model_fn; the
scaffold_fn is None), optimization.create_optimizer's polynomial_decay with
linear warmup, clip_by_global_norm and the AdamWeightDecayOptimizer subclass
of tf.compat.v1.train.Optimizer (its own adam_m/adam_v variables, the global
step incremented by the train op), TPUEstimatorSpec with eval_metrics =
(metric_fn, [tensors]) of tf.compat.v1.metrics.accuracy/mean, and
`tf.compat.v1.estimator.tpu.TPUEstimator(use_tpu=False, ...)` train,
evaluate and predict; main writes eval_results.txt and test_results.tsv.

Adapted: local tiny data and model (tests/programs/bert_classifier/data and
tiny_bert, written by make_data.py: 320/96/64 sentences over a 61-word
vocabulary whose label the mood words decide; a 2-layer, 32-wide BERT config
and its "pretrained" checkpoint saved once from TF 2.15.1), the published
command line with fewer steps (10 epochs of 320 at batch 32: 100 steps) and a
learning rate for a model this small, and a temporary output_dir. The flags
are given on sys.argv and the published file is run as __main__ (its
`tf.app.run()`). run_classifier.py has no seed flag: its RunConfig is
unseeded, so runs differ. The RESULT line, read back from the output_dir,
is added.
"""

import glob
import json
import os
import runpy
import sys
import tempfile

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
BERT_DIR = os.path.join(HERE, "bert_classifier")
MODEL_DIR = os.path.join(BERT_DIR, "tiny_bert")
DATA_DIR = os.path.join(BERT_DIR, "data")
OUTPUT_DIR = tempfile.mkdtemp()
INIT_CHECKPOINT = os.path.join(MODEL_DIR, "bert_model.ckpt")

sys.path.insert(0, BERT_DIR)  # run_classifier.py imports modeling, optimization, ...
sys.argv = [
    os.path.join(BERT_DIR, "run_classifier.py"),
    "--task_name=cola",
    "--do_train=true",
    "--do_eval=true",
    "--do_predict=true",
    "--data_dir=" + DATA_DIR,
    "--vocab_file=" + os.path.join(MODEL_DIR, "vocab.txt"),
    "--bert_config_file=" + os.path.join(MODEL_DIR, "bert_config.json"),
    "--init_checkpoint=" + INIT_CHECKPOINT,
    "--max_seq_length=32",
    "--train_batch_size=32",
    "--learning_rate=1e-3",
    "--num_train_epochs=10.0",
    "--output_dir=" + OUTPUT_DIR,
]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as exit_:  # tf.app.run() exits with main's return value
    if exit_.code not in (None, 0):
        raise

# ------------------------------------------------------------------ RESULT
eval_results = {}
with open(os.path.join(OUTPUT_DIR, "eval_results.txt")) as f:
    for line in f:
        key, value = line.strip().split(" = ")
        eval_results[key] = float(value)
with open(os.path.join(OUTPUT_DIR, "test_results.tsv")) as f:
    probabilities = [[float(p) for p in line.split("\t")] for line in f]
with open(os.path.join(DATA_DIR, "test_labels.txt")) as f:
    test_labels = [int(line) for line in f]

checkpoints = sorted(
    {
        name.split(".")[0] + "." + name.split(".")[1]
        for name in os.listdir(OUTPUT_DIR)
        if name.startswith("model.ckpt-")
    },
    key=lambda name: int(name.split("-")[1]),
)
pretrained = dict(tf.train.list_variables(INIT_CHECKPOINT))
latest = tf.train.latest_checkpoint(OUTPUT_DIR)
latest_variables = dict(tf.train.list_variables(latest))


def max_abs_diff(checkpoint):
    """Largest |value - pretrained value| over the pretrained variables."""
    return max(
        float(
            np.max(
                np.abs(
                    tf.train.load_variable(checkpoint, name)
                    - tf.train.load_variable(INIT_CHECKPOINT, name)
                )
            )
        )
        for name in pretrained
    )


first = os.path.join(OUTPUT_DIR, checkpoints[0])
# The loss summary of the first step (the training loss from the pretrained
# encoder and a new classifier layer).
first_loss = None
for events in sorted(glob.glob(os.path.join(OUTPUT_DIR, "events.out.tfevents.*"))):
    for event in tf.compat.v1.train.summary_iterator(events):
        for value in event.summary.value:
            if value.tag.startswith("loss") and event.step == 1:
                first_loss = value.simple_value
print(
    "RESULT "
    + json.dumps(
        {
            "global_step": int(eval_results["global_step"]),
            "eval_accuracy": eval_results["eval_accuracy"],
            "eval_loss": eval_results["eval_loss"],
            "loss": eval_results["loss"],
            "first_train_loss": first_loss,
            "eval_keys": sorted(eval_results),
            "num_predictions": len(probabilities),
            "predict_accuracy": float(
                np.mean(
                    [
                        int(np.argmax(p)) == label
                        for p, label in zip(probabilities, test_labels, strict=True)
                    ]
                )
            ),
            "probabilities_1": [round(p[1], 4) for p in probabilities[:6]],
            "checkpoints": checkpoints,
            "latest_checkpoint": os.path.basename(latest),
            # The first checkpoint (step 0) holds what init_from_checkpoint loaded.
            "first_checkpoint_vs_pretrained": max_abs_diff(first),
            "latest_vs_pretrained": max_abs_diff(latest),
            "pretrained_variables_in_latest": sorted(pretrained)
            == sorted(name for name in pretrained if name in latest_variables),
            "other_variables": sorted(
                name
                for name in latest_variables
                if name not in pretrained and not name.endswith(("/adam_m", "/adam_v"))
            ),
            "num_adam_slots": sum(
                name.endswith(("/adam_m", "/adam_v")) for name in latest_variables
            ),
            "output_files": sorted(
                name
                for name in os.listdir(OUTPUT_DIR)
                if not name.startswith("model.ckpt-")
                and not name.startswith("events.out")
            ),
        }
    )
)
