"""The TF1 cells of TensorFlow's "Migration examples: Canned Estimators" guide.

site/en/guide/migrate/canned_estimators.ipynb (tensorflow/docs): a pandas
frame of numeric columns, `Dataset.from_tensor_slices((dict(x_train),
y_train)).batch(32)` with no repeat, one `numeric_column(dtype=tf.float32)`
per feature, and a `tf.keras.optimizers.legacy.Ftrl` built by a lambda whose
learning rate is `tf1.train.exponential_decay` of the global step; then
LinearEstimator, DNNEstimator and DNNLinearCombinedEstimator (one optimizer
callable shared by both parts) with a BinaryClassHead, each trained with
`steps=100` (the data ends first) and evaluated with `steps=10`, and the
BoostedTreesEstimator cell the guide shows for TF1.

Changes from the guide: local data instead of the downloaded Titanic CSVs
(the same shape of frame: 7 numeric columns, int64 and float64 mixed, a 0/1
int64 label popped from it, taken from the bundled breast-cancer data with a
fixed 80/20 split), and the boosted trees' n_trees/max_depth/steps cut so
the program takes seconds.
"""

import json
import os

import numpy as np
import pandas as pd
import tensorflow as tf
import tensorflow.compat.v1 as tf1

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def load_frames():
    rows = np.loadtxt(os.path.join(DATA, "breast_cancer.csv"), delimiter=",", skiprows=1)
    frame = pd.DataFrame(
        {
            "radius": rows[:, 0],
            "texture": rows[:, 1],
            "perimeter": np.round(rows[:, 2]).astype(np.int64),
            "area": np.round(rows[:, 3]).astype(np.int64),
            "concavity": rows[:, 6],
            "worst_radius": rows[:, 20],
            "worst_concave": (rows[:, 27] > 0.1).astype(np.int64),
            "survived": rows[:, 30].astype(np.int64),
        }
    )
    order = np.random.RandomState(0).permutation(len(frame))
    train = frame.iloc[order[:455]].reset_index(drop=True)
    evaluation = frame.iloc[order[455:]].reset_index(drop=True)
    return train, evaluation


x_train, x_eval = load_frames()
y_train = x_train.pop("survived")
y_eval = x_eval.pop("survived")


# Data setup for TensorFlow 1 with `tf.estimator` (as in the guide)
def _input_fn():
    return tf1.data.Dataset.from_tensor_slices((dict(x_train), y_train)).batch(32)


def _eval_input_fn():
    return tf1.data.Dataset.from_tensor_slices((dict(x_eval), y_eval)).batch(32)


FEATURE_NAMES = [
    "radius", "texture", "perimeter", "area", "concavity", "worst_radius",
    "worst_concave",
]

feature_columns = []
for fn in FEATURE_NAMES:
    feat_col = tf1.feature_column.numeric_column(fn, dtype=tf.float32)
    feature_columns.append(feat_col)


def create_sample_optimizer(tf_version):
    if tf_version == "tf1":
        optimizer = lambda: tf.keras.optimizers.legacy.Ftrl(  # noqa: E731
            l1_regularization_strength=0.001,
            learning_rate=tf1.train.exponential_decay(
                learning_rate=0.1,
                global_step=tf1.train.get_global_step(),
                decay_steps=10000,
                decay_rate=0.9))
    return optimizer


def summary(estimator, metrics):
    return {
        "global_step": int(estimator.get_variable_value("global_step")),
        "eval_global_step": int(metrics["global_step"]),
        "accuracy": float(metrics["accuracy"]),
        "auc": float(metrics["auc"]),
        "loss": float(metrics["loss"]),
        "metric_keys": sorted(metrics),
    }


result = {}

# Example 1: LinearEstimator
linear_estimator = tf.estimator.LinearEstimator(
    head=tf.estimator.BinaryClassHead(),
    feature_columns=feature_columns,
    optimizer=create_sample_optimizer('tf1'))

linear_estimator.train(input_fn=_input_fn, steps=100)
result["linear"] = summary(
    linear_estimator, linear_estimator.evaluate(input_fn=_eval_input_fn, steps=10)
)

# Example 2: DNNEstimator
dnn_estimator = tf.estimator.DNNEstimator(
    head=tf.estimator.BinaryClassHead(),
    feature_columns=feature_columns,
    hidden_units=[128],
    activation_fn=tf.nn.relu,
    optimizer=create_sample_optimizer('tf1'))

dnn_estimator.train(input_fn=_input_fn, steps=100)
result["dnn"] = summary(
    dnn_estimator, dnn_estimator.evaluate(input_fn=_eval_input_fn, steps=10)
)

# Example 3: DNNLinearCombinedEstimator
optimizer = create_sample_optimizer('tf1')

combined_estimator = tf.estimator.DNNLinearCombinedEstimator(
    head=tf.estimator.BinaryClassHead(),
    # Wide settings
    linear_feature_columns=feature_columns,
    linear_optimizer=optimizer,
    # Deep settings
    dnn_feature_columns=feature_columns,
    dnn_hidden_units=[128],
    dnn_optimizer=optimizer)

combined_estimator.train(input_fn=_input_fn, steps=100)
result["combined"] = summary(
    combined_estimator, combined_estimator.evaluate(input_fn=_eval_input_fn, steps=10)
)

# Example 4: BoostedTreesEstimator (the guide: n_trees=1000, max_depth=10,
# train steps=1000, evaluate steps=100; the data ends after 15 batches).
# tf.estimator 2.15 no longer has it (the guide shows the cell as text):
# recorded as available or not.
try:
    bt_estimator = tf1.estimator.BoostedTreesEstimator(
        head=tf.estimator.BinaryClassHead(),
        n_batches_per_layer=1,
        max_depth=3,
        n_trees=10,
        feature_columns=feature_columns)
except AttributeError:
    result["boosted_trees"] = {"available": False}
else:
    bt_estimator.train(input_fn=_input_fn, steps=1000)
    result["boosted_trees"] = dict(
        summary(bt_estimator, bt_estimator.evaluate(input_fn=_eval_input_fn, steps=100)),
        available=True,
    )

flat = {
    f"{name}_{key}": value
    for name, values in result.items()
    for key, value in values.items()
}
print("RESULT " + json.dumps(flat, sort_keys=True))
