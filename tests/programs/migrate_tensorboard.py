"""The TF1 cell of TensorFlow's "Migrate TensorBoard" guide.

site/en/guide/migrate/tensorboard.ipynb (tensorflow/docs): a DNNClassifier
over one `numeric_column("x", shape=...)` of images, with
`RunConfig(save_summary_steps=1, save_checkpoints_steps=1)`, Adam, dropout
0.1, `numpy_input_fn` for training (10 epochs, batches of 50, shuffled) and
evaluation (10 epochs, unshuffled, default batch 128), and
`train_and_evaluate` with `TrainSpec(max_steps=10)` and
`EvalSpec(steps=10, throttle_secs=0)`; then TensorBoard is shown the
model_dir.

Changes from the guide: the bundled 8x8 digits (1,797 images, first 1,500
for training) instead of the downloaded 28x28 MNIST, so the column's shape
is [8, 8] and the pixels are divided by 16 instead of 255; the notebook's
`%load_ext tensorboard` / `%tensorboard` magics are left out, and the RESULT
line records what TensorBoard would read from the model_dir: the tags and
steps of the event files' summaries.
"""

import datetime  # noqa: F401  (the guide imports it)
import gzip
import json
import os
import tempfile

import numpy as np
import tensorflow as tf
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

config = tf1.estimator.RunConfig(save_summary_steps=1,
                                 save_checkpoints_steps=1)

path = tempfile.mkdtemp()

classifier = tf1.estimator.DNNClassifier(
    feature_columns=feature_columns,
    hidden_units=[256, 32],
    optimizer=tf1.train.AdamOptimizer(0.001),
    n_classes=10,
    dropout=0.1,
    model_dir=path,
    config = config
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

tf1.estimator.train_and_evaluate(estimator=classifier,
                                train_spec=train_spec,
                                eval_spec=eval_spec)


def summaries(directory):
    """tag -> sorted steps of the summaries in the directory's event files."""
    steps = {}
    for event_file in tf1.gfile.Glob(os.path.join(directory, "events.out.*")):
        for event in tf1.train.summary_iterator(event_file):
            for value in event.summary.value:
                steps.setdefault(value.tag, []).append(int(event.step))
    return {tag: sorted(found) for tag, found in steps.items()}


def scalar(directory, tag, step):
    for event_file in tf1.gfile.Glob(os.path.join(directory, "events.out.*")):
        for event in tf1.train.summary_iterator(event_file):
            for value in event.summary.value:
                if value.tag == tag and event.step == step:
                    if value.HasField("simple_value"):
                        return value.simple_value
                    return float(tf.make_ndarray(value.tensor))
    return None


train = summaries(classifier.model_dir)
evaluation = summaries(os.path.join(classifier.model_dir, "eval"))
result = {
    "global_step": int(classifier.get_variable_value("global_step")),
    "train_tags": sorted(t for t in train if not t.startswith("enqueue_input/")),
    # numpy_input_fn's queue reported how full it was.
    "input_queue_tags": sorted(t for t in train if t.startswith("enqueue_input/")),
    "train_loss_steps": train.get("loss"),
    "train_histogram_tags": sorted(t for t in train if "hiddenlayer" in t or "logits" in t),
    "steps_per_sec_steps": train.get("global_step/sec"),
    "eval_tags": sorted(evaluation),
    "eval_loss_steps": evaluation.get("loss"),
    "eval_accuracy_at_10": scalar(os.path.join(path, "eval"), "accuracy", 10),
    "eval_average_loss_at_10": scalar(os.path.join(path, "eval"), "average_loss", 10),
}
print("RESULT " + json.dumps(result, sort_keys=True))
