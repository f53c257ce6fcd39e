"""The TF1 cells of TensorFlow's "Migrate evaluation" guide.

site/en/guide/migrate/evaluator.ipynb (tensorflow/docs): a DNNClassifier
over one `numeric_column("x", shape=...)` of images, without a model_dir or
a RunConfig, with Adam and dropout, `numpy_input_fn` for training (10
epochs, batches of 50, shuffled) and evaluation (10 epochs, unshuffled,
default batch 128), and `train_and_evaluate` with `TrainSpec(max_steps=10)`
and `EvalSpec(steps=10, throttle_secs=0)`.

Changes from the guide: the bundled 8x8 digits (1,797 images, first 1,500
for training) instead of the downloaded 28x28 MNIST, so the column's shape
is [8, 8] and the pixels are divided by 16 instead of 255. The RESULT line
records what train_and_evaluate returned and the temporary model_dir.
"""

import gzip
import json
import os
import re
import tempfile
import time  # noqa: F401  (the guide imports it)

import numpy as np
import tensorflow as tf  # noqa: F401  (the guide imports it)
import tensorflow.compat.v1 as tf1

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

with gzip.open(os.path.join(DATA, "digits.csv.gz"), "rt") as handle:
    rows = np.loadtxt(handle, delimiter=",")
images = rows[:, :64].reshape(-1, 8, 8)
digit_labels = rows[:, 64].astype(np.int64)
(x_train, y_train), (x_test, y_test) = (images[:1500], digit_labels[:1500]), (
    images[1500:],
    digit_labels[1500:],
)
x_train, x_test = x_train / 16.0, x_test / 16.0

feature_columns = [tf1.feature_column.numeric_column("x", shape=[8, 8])]

classifier = tf1.estimator.DNNClassifier(
    feature_columns=feature_columns,
    hidden_units=[256, 32],
    optimizer=tf1.train.AdamOptimizer(0.001),
    n_classes=10,
    dropout=0.2
)

train_input_fn = tf1.estimator.inputs.numpy_input_fn(
    x={"x": x_train},
    y=y_train.astype(np.int32),
    num_epochs=10,
    batch_size=50,
    shuffle=True,
)

test_input_fn = tf1.estimator.inputs.numpy_input_fn(
    x={"x": x_test},
    y=y_test.astype(np.int32),
    num_epochs=10,
    shuffle=False
)

train_spec = tf1.estimator.TrainSpec(input_fn=train_input_fn, max_steps=10)
eval_spec = tf1.estimator.EvalSpec(input_fn=test_input_fn,
                                   steps=10,
                                   throttle_secs=0)

returned = tf1.estimator.train_and_evaluate(estimator=classifier,
                                            train_spec=train_spec,
                                            eval_spec=eval_spec)

model_dir = classifier.model_dir
names = os.listdir(model_dir)
eval_files = tf1.gfile.Glob(os.path.join(model_dir, "eval", "events.out.*"))
eval_steps = sorted(
    int(event.step)
    for event_file in eval_files
    for event in tf1.train.summary_iterator(event_file)
    if any(value.tag == "loss" for value in event.summary.value)
)
metrics, exports = returned if returned else (None, None)
result = {
    "model_dir_is_temporary": os.path.dirname(model_dir) == tempfile.gettempdir(),
    "global_step": int(classifier.get_variable_value("global_step")),
    "checkpoint_steps": sorted(
        int(m.group(1))
        for m in (re.match(r"model\.ckpt-(\d+)\.index$", n) for n in names)
        if m
    ),
    "eval_steps": eval_steps,
    "returned_metric_keys": sorted(metrics) if metrics else None,
    "returned_global_step": int(metrics["global_step"]) if metrics else None,
    "accuracy": float(metrics["accuracy"]) if metrics else None,
    "average_loss": float(metrics["average_loss"]) if metrics else None,
    "returned_exports": exports,
}
print("RESULT " + json.dumps(result, sort_keys=True))
