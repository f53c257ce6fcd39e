"""TensorFlow's "Boosted trees using Estimators" tutorial, as published.

site/en/tutorials/estimator/boosted_trees.ipynb (github.com/tensorflow/docs,
removed from the site in January 2022, after TF 2.7; the text here is its
last version): the titanic frame, indicator columns over each categorical
column's `unique()` vocabulary plus numeric columns, whole-dataset batches
(NUM_EXAMPLES rows, repeated without end for training), a LinearClassifier
trained to max_steps=100 and evaluated, then a BoostedTreesClassifier with
n_batches_per_layer=1 trained to max_steps=100, evaluated, and its predicted
probabilities of the evaluation set.

Changes: local data (tests/programs/data/titanic_*.csv, written by
make_titanic.py with the published files' columns, vocabularies and row
counts) instead of the downloaded CSVs; the notebook-only lines (IPython's
clear_output, the `head()`/`describe()` cells, matplotlib and the plotting
cells, the ROC-curve cell) dropped; the DenseFeatures outputs and the linear
model's results kept in variables for the final RESULT line, which is added.
tf.estimator 2.15 no longer has BoostedTreesClassifier (TensorFlow registers
no kernels for its ops since 2.9): as in migrate_canned_estimators.py, the
boosted-trees cells are recorded as available or not, so the linear half
still compares with 2.15 (`boosted_trees_available` false there). Their
reference is tf.estimator 2.8 (benchmarks/_ref_venv_28.py).
"""

import json
import os

import numpy as np
import pandas as pd

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

# Load dataset.
dftrain = pd.read_csv(os.path.join(DATA, "titanic_train.csv"))
dfeval = pd.read_csv(os.path.join(DATA, "titanic_eval.csv"))
y_train = dftrain.pop('survived')
y_eval = dfeval.pop('survived')

import tensorflow as tf  # noqa: E402 (as published)

tf.random.set_seed(123)

CATEGORICAL_COLUMNS = ['sex', 'n_siblings_spouses', 'parch', 'class', 'deck',
                       'embark_town', 'alone']
NUMERIC_COLUMNS = ['age', 'fare']

def one_hot_cat_column(feature_name, vocab):
  return tf.feature_column.indicator_column(
      tf.feature_column.categorical_column_with_vocabulary_list(feature_name,
                                                 vocab))
feature_columns = []
for feature_name in CATEGORICAL_COLUMNS:
  # Need to one-hot encode categorical features.
  vocabulary = dftrain[feature_name].unique()
  feature_columns.append(one_hot_cat_column(feature_name, vocabulary))

for feature_name in NUMERIC_COLUMNS:
  feature_columns.append(tf.feature_column.numeric_column(feature_name,
                                           dtype=tf.float32))

example = dict(dftrain.head(1))
class_fc = tf.feature_column.indicator_column(tf.feature_column.categorical_column_with_vocabulary_list('class', ('First', 'Second', 'Third')))
print('Feature value: "{}"'.format(example['class'].iloc[0]))
class_one_hot = tf.keras.layers.DenseFeatures([class_fc])(example).numpy()
print('One-hot encoded: ', class_one_hot)

example_dense = tf.keras.layers.DenseFeatures(feature_columns)(example).numpy()

# Use entire batch since this is such a small dataset.
NUM_EXAMPLES = len(y_train)

def make_input_fn(X, y, n_epochs=None, shuffle=True):
  def input_fn():
    dataset = tf.data.Dataset.from_tensor_slices((dict(X), y))
    if shuffle:
      dataset = dataset.shuffle(NUM_EXAMPLES)
    # For training, cycle thru dataset as many times as need (n_epochs=None).
    dataset = dataset.repeat(n_epochs)
    # In memory training doesn't use batching.
    dataset = dataset.batch(NUM_EXAMPLES)
    return dataset
  return input_fn

# Training and evaluation input functions.
train_input_fn = make_input_fn(dftrain, y_train)
eval_input_fn = make_input_fn(dfeval, y_eval, shuffle=False, n_epochs=1)

linear_est = tf.estimator.LinearClassifier(feature_columns)

# Train model.
linear_est.train(train_input_fn, max_steps=100)

# Evaluation.
result = linear_est.evaluate(eval_input_fn)
print(pd.Series(result))
linear_result = result


def metrics(res, prefix):
    out = {f"{prefix}_keys": sorted(res)}
    for key, value in res.items():
        out[f"{prefix}_{key}"] = int(value) if key == "global_step" else float(value)
    return out


RESULT = {
    "class_one_hot": class_one_hot.tolist(),
    "example_dense_shape": list(example_dense.shape),
    "example_dense_sum": float(example_dense.sum()),
}
RESULT.update(metrics(linear_result, "linear"))

try:
    tf.estimator.BoostedTreesClassifier  # noqa: B018 (does 2.15 have it?)
except AttributeError:
    RESULT["boosted_trees_available"] = False
else:
    RESULT["boosted_trees_available"] = True

    # Since data fits into memory, use entire dataset per layer. It will be faster.
    # Above one batch is defined as the entire dataset.
    n_batches = 1
    est = tf.estimator.BoostedTreesClassifier(feature_columns,
                                              n_batches_per_layer=n_batches)

    # The model will stop training once the specified number of trees is built, not
    # based on the number of steps.
    est.train(train_input_fn, max_steps=100)

    # Eval.
    result = est.evaluate(eval_input_fn)
    print(pd.Series(result))

    pred_dicts = list(est.predict(eval_input_fn))
    probs = pd.Series([pred['probabilities'][1] for pred in pred_dicts])

    first = pred_dicts[0]
    RESULT.update(metrics(result, "boosted_trees"))
    RESULT.update(
        {
            "boosted_trees_num_predictions": len(pred_dicts),
            "boosted_trees_prediction_keys": sorted(first),
            "boosted_trees_prediction_shapes": {
                k: list(np.shape(v)) for k, v in sorted(first.items())
            },
            "boosted_trees_probs_first5": [float(p) for p in probs[:5]],
            "boosted_trees_probs_mean": float(probs.mean()),
            "boosted_trees_predict_accuracy": float(
                np.mean([int(p["class_ids"][0]) for p in pred_dicts] == y_eval.values)
            ),
            "boosted_trees_checkpoint_step": int(
                est.get_variable_value("global_step")
            ),
        }
    )

print("RESULT " + json.dumps(RESULT, sort_keys=True))
