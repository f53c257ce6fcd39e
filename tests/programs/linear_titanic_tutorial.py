"""TensorFlow's "Build a linear model with Estimators" tutorial, as published.

site/en/tutorials/estimator/linear.ipynb (github.com/tensorflow/docs): the
titanic frame from CSV through pandas, categorical_column_with_vocabulary_list
over each column's `unique()` values (int64 vocabularies for the integer
columns) and numeric columns, a batch inspected through
tf.keras.layers.DenseFeatures, LinearClassifier trained (10 epochs of batches
of 32) and evaluated, then again with a crossed_column of the raw `age` float
and `sex`, and the predicted probabilities of the evaluation set.

Changes: local data (tests/programs/data/titanic_*.csv, written by
make_titanic.py with the published files' columns, vocabularies and row
counts) instead of the downloaded CSVs; the notebook-only lines
(`!pip install`, IPython's clear_output, the exploratory `head()`/
`describe()` cells, matplotlib and the plotting cells, the ROC-curve cell)
dropped; the two DenseFeatures outputs, the first model's results and
variable names kept in variables (the notebook displayed them or overwrote
them) for the final RESULT line, which is added.
"""

import json
import os

import numpy as np  # noqa: I001 (the notebook's import order)
import pandas as pd
import tensorflow as tf
import tensorflow.compat.v2.feature_column as fc  # noqa: F401 (as published)

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

# Load dataset.
dftrain = pd.read_csv(os.path.join(DATA, "titanic_train.csv"))
dfeval = pd.read_csv(os.path.join(DATA, "titanic_eval.csv"))
y_train = dftrain.pop('survived')
y_eval = dfeval.pop('survived')

CATEGORICAL_COLUMNS = ['sex', 'n_siblings_spouses', 'parch', 'class', 'deck',
                       'embark_town', 'alone']
NUMERIC_COLUMNS = ['age', 'fare']

feature_columns = []
for feature_name in CATEGORICAL_COLUMNS:
  vocabulary = dftrain[feature_name].unique()
  feature_columns.append(tf.feature_column.categorical_column_with_vocabulary_list(feature_name, vocabulary))

for feature_name in NUMERIC_COLUMNS:
  feature_columns.append(tf.feature_column.numeric_column(feature_name, dtype=tf.float32))


def make_input_fn(data_df, label_df, num_epochs=10, shuffle=True, batch_size=32):
  def input_function():
    ds = tf.data.Dataset.from_tensor_slices((dict(data_df), label_df))
    if shuffle:
      ds = ds.shuffle(1000)
    ds = ds.batch(batch_size).repeat(num_epochs)
    return ds
  return input_function

train_input_fn = make_input_fn(dftrain, y_train)
eval_input_fn = make_input_fn(dfeval, y_eval, num_epochs=1, shuffle=False)

ds = make_input_fn(dftrain, y_train, batch_size=10)()
for feature_batch, label_batch in ds.take(1):
  print('Some feature keys:', list(feature_batch.keys()))
  print()
  print('A batch of class:', feature_batch['class'].numpy())
  print()
  print('A batch of Labels:', label_batch.numpy())

age_column = feature_columns[7]
age_dense = tf.keras.layers.DenseFeatures([age_column])(feature_batch).numpy()

gender_column = feature_columns[0]
gender_dense = tf.keras.layers.DenseFeatures([tf.feature_column.indicator_column(gender_column)])(feature_batch).numpy()

linear_est = tf.estimator.LinearClassifier(feature_columns=feature_columns)
linear_est.train(train_input_fn)
result = linear_est.evaluate(eval_input_fn)

print(result)
first_result = result
first_variables = linear_est.get_variable_names()

age_x_gender = tf.feature_column.crossed_column(['age', 'sex'], hash_bucket_size=100)

derived_feature_columns = [age_x_gender]
linear_est = tf.estimator.LinearClassifier(feature_columns=feature_columns+derived_feature_columns)
linear_est.train(train_input_fn)
result = linear_est.evaluate(eval_input_fn)

print(result)

pred_dicts = list(linear_est.predict(eval_input_fn))
probs = pd.Series([pred['probabilities'][1] for pred in pred_dicts])


def metrics(res, prefix):
    out = {f"{prefix}_keys": sorted(res)}
    for key, value in res.items():
        out[f"{prefix}_{key}"] = int(value) if key == "global_step" else float(value)
    return out


cross_weights = linear_est.get_variable_value("linear/linear_model/age_X_sex/weights")
first = pred_dicts[0]
RESULT = {
    "feature_keys": sorted(feature_batch.keys()),
    "class_batch_dtype": str(feature_batch["class"].dtype.name),
    "age_batch_dtype": str(feature_batch["age"].dtype.name),
    "n_siblings_spouses_batch_dtype": str(feature_batch["n_siblings_spouses"].dtype.name),
    "age_dense_shape": list(age_dense.shape),
    "age_dense_equals_batch": bool(
        np.allclose(age_dense[:, 0], feature_batch["age"].numpy())
    ),
    "gender_dense_shape": list(gender_dense.shape),
    "gender_dense_row_sums": sorted(set(gender_dense.sum(axis=1).tolist())),
    "gender_dense_matches_sex": bool(
        all(
            gender_dense[i, 0 if s == b"male" else 1] == 1.0
            for i, s in enumerate(feature_batch["sex"].numpy())
        )
    ),
    "first_variable_names": first_variables,
    "crossed_variable_names": linear_est.get_variable_names(),
    "cross_weights_shape": list(cross_weights.shape),
    "cross_weights_nonzero": int(np.count_nonzero(cross_weights)),
    "num_predictions": len(pred_dicts),
    "prediction_keys": sorted(first),
    "prediction_shapes": {k: list(np.shape(v)) for k, v in sorted(first.items())},
    "prediction_dtypes": {k: str(np.asarray(v).dtype) for k, v in sorted(first.items())},
    "classes_values": sorted({p["classes"][0].decode() for p in pred_dicts}),
    "all_class_ids_values": sorted({tuple(np.asarray(p["all_class_ids"]).tolist()) for p in pred_dicts})[0],
    "all_classes_values": sorted({tuple(x.decode() for x in p["all_classes"]) for p in pred_dicts})[0],
    "probs_first5": [float(p) for p in probs[:5]],
    "probs_mean": float(probs.mean()),
    "probs_sum_to_one": bool(
        all(abs(float(np.sum(p["probabilities"])) - 1.0) < 1e-5 for p in pred_dicts)
    ),
    "logistic_equals_prob1": bool(
        all(abs(float(p["logistic"][0]) - float(p["probabilities"][1])) < 1e-6 for p in pred_dicts)
    ),
    "predict_accuracy": float(
        np.mean([int(p["class_ids"][0]) for p in pred_dicts] == y_eval.values)
    ),
}
RESULT.update(metrics(first_result, "first"))
RESULT.update(metrics(result, "crossed"))
print("RESULT " + json.dumps(RESULT, sort_keys=True))
