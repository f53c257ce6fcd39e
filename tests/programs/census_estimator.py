"""Google Cloud ML Engine's census wide & deep estimator (census/estimator), as published.

GoogleCloudPlatform/cloudml-samples, census/estimator/trainer/ (task.py,
model.py, featurizer.py, input.py) and census/estimator/constants/ at commit
efddc4a9898127e55edc0946557aca4bfaf59705 (main, 2021; these files last changed
in 3d36c8808945e8e1cacc58afed11f9aa3eb26c42, "Fix flake8 errors",
2020-02-27), with the repository's LICENSE, in
tests/programs/census_estimator/; this script is the command line (the
sample's scripts/train-local.sh runs `gcloud ai-platform local train
--module-name=trainer.task`, i.e. `python -m trainer.task` from
census/estimator/). What runs: `tf.data.TextLineDataset` of the adult CSVs,
`tf.io.decode_csv` in a `map(num_parallel_calls)` + prefetch + shuffle,
repeat, batch and a one-shot iterator, the label through a lookup table,
wide columns (vocabulary lists, hash buckets, a bucketized age, three crossed
columns of 1e4-1e6 buckets) and deep ones (indicators, embeddings, numerics)
into a `tf.estimator.DNNLinearCombinedClassifier` with hidden units decaying
from --first-layer-size, `RunConfig(session_config=None).replace(model_dir=)`,
`tf.estimator.train_and_evaluate` with an EvalSpec named 'census-eval' and
a `FinalExporter('census', json_serving_input_fn)`: one placeholder per input
column, ServingInputReceiver(inputs, inputs).

Every version of census/estimator needs TensorFlow 1 (its requirements.txt
says tensorflow>=1.15,<2): all of them build the label table with
tf.contrib.lookup.index_table_from_tensor. The files here are the published
ones after TensorFlow 2.15.1's own `tf_upgrade_v2 --intree` (tf.decode_csv ->
tf.io.decode_csv, tf.parse_example -> tf.io.parse_example, tf.placeholder,
tf.ConfigProto, tf.logging.set_verbosity -> tf.compat.v1.*,
`dataset.make_one_shot_iterator()` ->
`tf.compat.v1.data.make_one_shot_iterator(dataset)`, and on
DNNLinearCombinedClassifier the TF 1 default it inserts,
`loss_reduction=tf.keras.losses.Reduction.SUM`), plus the one line it
reports it cannot convert, tf.contrib.lookup.index_table_from_tensor(
tf.constant(LABELS)), written as what that function built:
`tf.compat.v1.lookup.StaticHashTable(KeyValueTensorInitializer(
tf.constant(LABELS), tf.range(len(LABELS), dtype=tf.int64)), -1)`. Nothing
else is changed.

Adapted: local synthetic data in the UCI adult layout
(census_estimator/data/adult.{data,test}.csv, 2400 and 800 rows, written by
census_estimator/make_data.py: the sample reads them from
gs://cloud-samples-data), train-local.sh's 1000 train steps (about 17
epochs at the default batch of 40) and 20 eval steps of 40 (the 800 test
rows once, where train-local.sh's 100 would repeat them), a temporary --job-dir;
the other flags keep their defaults (--export-format JSON, hidden units
[100, 70, 49, 34]). RunConfig is unseeded, so runs differ. The RESULT line,
read back from the job dir (the eval events, the checkpoint and the
FinalExporter's SavedModel, loaded with tf.saved_model.load and served on
three test rows, against the estimator's own predict on those rows), is
added.
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
CENSUS_DIR = os.path.join(HERE, "census_estimator")
TRAIN_FILE = os.path.join(CENSUS_DIR, "data", "adult.data.csv")
EVAL_FILE = os.path.join(CENSUS_DIR, "data", "adult.test.csv")
JOB_DIR = tempfile.mkdtemp()
TRAIN_STEPS = 1000

sys.path.insert(0, CENSUS_DIR)  # trainer.task imports trainer.* and constants
sys.argv = [
    os.path.join(CENSUS_DIR, "trainer", "task.py"),
    "--train-files",
    TRAIN_FILE,
    "--eval-files",
    EVAL_FILE,
    "--job-dir",
    JOB_DIR,
    "--train-steps",
    str(TRAIN_STEPS),
    "--eval-steps",
    "20",
]
runpy.run_module("trainer.task", run_name="__main__", alter_sys=True)

# ------------------------------------------------------------------ RESULT
import trainer.featurizer as featurizer  # noqa: E402
import trainer.model as model  # noqa: E402
from constants import constants  # noqa: E402

eval_metrics = {}
eval_events = sorted(
    glob.glob(os.path.join(JOB_DIR, "eval_census-eval", "events.out.*"))
)
for events in eval_events:
    for event in tf.compat.v1.train.summary_iterator(events):
        for value in event.summary.value:
            if value.HasField("simple_value"):
                number = value.simple_value
            elif value.HasField("tensor"):
                number = tf.make_ndarray(value.tensor)
                if number.size != 1 or number.dtype.kind not in "biuf":
                    continue  # the checkpoint_path string
                number = number.item()
            else:
                continue
            eval_metrics[value.tag] = (event.step, float(number))
eval_steps = sorted({step for step, _ in eval_metrics.values()})
metrics = {tag: number for tag, (_, number) in eval_metrics.items()}

export_base = os.path.join(JOB_DIR, "export", "census")
exports = sorted(os.listdir(export_base)) if os.path.isdir(export_base) else []
export_dir = os.path.join(export_base, exports[-1])

# Three test rows (the first two " <=50K" and the first " >50K"), as the
# JSON serving input takes them: one list per column.
with open(EVAL_FILE) as f:
    rows = [
        dict(zip(constants.CSV_COLUMNS, line.rstrip("\n").split(","), strict=True))
        for line in f
    ]
parsed = sorted(
    [row for row in rows if row[constants.LABEL_COLUMN] == constants.LABELS[0]][:2]
    + [row for row in rows if row[constants.LABEL_COLUMN] == constants.LABELS[1]][:1],
    key=rows.index,
)
true_labels = [constants.LABELS.index(row[constants.LABEL_COLUMN]) for row in parsed]
instances = {
    column.name: (
        np.array([float(row[column.name]) for row in parsed], np.float32)
        if column.dtype == tf.float32
        else np.array([row[column.name].encode() for row in parsed], object)
    )
    for column in featurizer.INPUT_COLUMNS
}

loaded = tf.saved_model.load(export_dir)
signature_keys = sorted(loaded.signatures.keys())
serving_key = "serving_default" if "serving_default" in signature_keys else "predict"
signature = loaded.signatures[serving_key]
served = signature(**{name: tf.constant(array) for name, array in instances.items()})
served_probabilities = served["probabilities"].numpy()

# The estimator's own predict on the same rows, from the job dir's checkpoint.
estimator = model.build_estimator(
    config=tf.estimator.RunConfig(model_dir=JOB_DIR),
    embedding_size=8,
    hidden_units=[max(2, int(100 * 0.7**i)) for i in range(4)],
)
predictions = list(
    estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(instances).batch(3))
)
predicted_probabilities = np.array([p["probabilities"] for p in predictions])

latest = tf.train.latest_checkpoint(JOB_DIR)
variables = [name for name, _ in tf.train.list_variables(latest)]
print(
    "RESULT "
    + json.dumps(
        {
            # The eval events' step (2.15 writes no global_step summary).
            "global_step": eval_steps[-1] if eval_steps else None,
            "eval_steps": eval_steps,
            "eval_keys": sorted(metrics),
            "accuracy": metrics.get("accuracy"),
            "auc": metrics.get("auc"),
            "auc_precision_recall": metrics.get("auc_precision_recall"),
            "precision": metrics.get("precision"),
            "recall": metrics.get("recall"),
            "loss": metrics.get("loss"),
            "average_loss": metrics.get("average_loss"),
            "label_mean": metrics.get("label/mean"),
            "prediction_mean": metrics.get("prediction/mean"),
            "accuracy_baseline": metrics.get("accuracy_baseline"),
            "latest_checkpoint": os.path.basename(latest),
            "num_exports": len(exports),
            "export_files": sorted(os.listdir(export_dir)),
            "signature_keys": signature_keys,
            "serving_key": serving_key,
            "serving_inputs": sorted(signature.structured_input_signature[1]),
            "served_output_keys": sorted(served),
            "served_probabilities_1": [
                round(float(p[1]), 4) for p in served_probabilities
            ],
            "served_class_ids": [int(c) for c in served["class_ids"].numpy().ravel()],
            "served_classes": [c.decode() for c in served["classes"].numpy().ravel()],
            "true_labels": true_labels,
            "served_equals_predict": bool(
                np.allclose(served_probabilities, predicted_probabilities, atol=1e-5)
            ),
            "linear_variables": sorted(
                v for v in variables if v.startswith("linear/") and "Ftrl" not in v
            ),
            "dnn_variables": sorted(
                v for v in variables if v.startswith("dnn/") and "Adagrad" not in v
            ),
            "num_variables": len(variables),
        }
    )
)
