"""TensorFlow's "Gradient Boosted Trees: Model understanding" tutorial, as published.

site/en/tutorials/estimator/boosted_trees_model_understanding.ipynb
(github.com/tensorflow/docs, removed from the site in January 2022, after TF
2.7; the text here is its last version): the titanic frame through
`to_dict(orient='list')` into whole-dataset batches, a BoostedTreesClassifier
(n_trees=50, max_depth=3, center_bias=True) trained to max_steps=100 and
evaluated, then one trained with train_in_memory=True from an input_fn
returning (dict(X), y) with no step limit; its directional feature
contributions from experimental_predict_with_explanations (checked, as the
tutorial does, to sum with the bias to the probability), gain feature
importances from experimental_feature_importances(normalize=True),
permutation importances from nine re-evaluations, then a LinearRegressor
(max_steps=500) and a 37-tree BoostedTreesRegressor (max_steps=500) on
5000 points of z = x * exp(-x**2 - y**2), predicted on the 200 x 210 grid.

Changes: local data (tests/programs/data/titanic_*.csv, written by
make_titanic.py with the published files' columns, vocabularies and row
counts) instead of the downloaded CSVs; the notebook-only lines (`!pip
install`, IPython's clear_output, seaborn, matplotlib and the plotting cells,
scipy's griddata used only for the contour plot) dropped; the evaluation
results and the plotted grids kept in variables (the second `importances` as
`perm_importances`, as the first is recorded too) for the final RESULT line,
which is added. tf.estimator 2.15 no longer has the boosted-trees estimators
(TensorFlow registers no kernels for their ops since 2.9), so there the
program stops at the first BoostedTreesClassifier and prints what it has
(`boosted_trees_available` false), as migrate_canned_estimators.py does;
the reference for the rest is tf.estimator 2.8 (benchmarks/_ref_venv_28.py).
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

fc = tf.feature_column
CATEGORICAL_COLUMNS = ['sex', 'n_siblings_spouses', 'parch', 'class', 'deck',
                       'embark_town', 'alone']
NUMERIC_COLUMNS = ['age', 'fare']

def one_hot_cat_column(feature_name, vocab):
  return fc.indicator_column(
      fc.categorical_column_with_vocabulary_list(feature_name,
                                                 vocab))
feature_columns = []
for feature_name in CATEGORICAL_COLUMNS:
  # Need to one-hot encode categorical features.
  vocabulary = dftrain[feature_name].unique()
  feature_columns.append(one_hot_cat_column(feature_name, vocabulary))

for feature_name in NUMERIC_COLUMNS:
  feature_columns.append(fc.numeric_column(feature_name,
                                           dtype=tf.float32))

# Use entire batch since this is such a small dataset.
NUM_EXAMPLES = len(y_train)

def make_input_fn(X, y, n_epochs=None, shuffle=True):
  def input_fn():
    dataset = tf.data.Dataset.from_tensor_slices((X.to_dict(orient='list'), y))
    if shuffle:
      dataset = dataset.shuffle(NUM_EXAMPLES)
    # For training, cycle thru dataset as many times as need (n_epochs=None).
    dataset = (dataset
      .repeat(n_epochs)
      .batch(NUM_EXAMPLES))
    return dataset
  return input_fn

# Training and evaluation input functions.
train_input_fn = make_input_fn(dftrain, y_train)
eval_input_fn = make_input_fn(dfeval, y_eval, shuffle=False, n_epochs=1)


def metrics(res, prefix):
    out = {f"{prefix}_keys": sorted(res)}
    for key, value in res.items():
        out[f"{prefix}_{key}"] = int(value) if key == "global_step" else float(value)
    return out


RESULT = {}
try:
    tf.estimator.BoostedTreesClassifier  # noqa: B018 (does 2.15 have it?)
except AttributeError:
    RESULT["boosted_trees_available"] = False
    print("RESULT " + json.dumps(RESULT, sort_keys=True))
    raise SystemExit(0) from None
RESULT["boosted_trees_available"] = True

params = {
  'n_trees': 50,
  'max_depth': 3,
  'n_batches_per_layer': 1,
  # You must enable center_bias = True to get DFCs. This will force the model to
  # make an initial prediction before using any features (e.g. use the mean of
  # the training labels for regression or log odds for classification when
  # using cross entropy loss).
  'center_bias': True
}

est = tf.estimator.BoostedTreesClassifier(feature_columns, **params)
# Train model.
est.train(train_input_fn, max_steps=100)

# Evaluation.
results = est.evaluate(eval_input_fn)
print(pd.Series(results).to_frame())
RESULT.update(metrics(results, "streamed"))

in_memory_params = dict(params)
in_memory_params['n_batches_per_layer'] = 1
# In-memory input_fn does not use batching.
def make_inmemory_train_input_fn(X, y):
  y = np.expand_dims(y, axis=1)
  def input_fn():
    return dict(X), y
  return input_fn
train_input_fn = make_inmemory_train_input_fn(dftrain, y_train)

# Train the model.
est = tf.estimator.BoostedTreesClassifier(
    feature_columns,
    train_in_memory=True,
    **in_memory_params)

est.train(train_input_fn)
in_memory_results = est.evaluate(eval_input_fn)
print(in_memory_results)
RESULT.update(metrics(in_memory_results, "in_memory"))

pred_dicts = list(est.experimental_predict_with_explanations(eval_input_fn))

# Create DFC Pandas dataframe.
labels = y_eval.values
probs = pd.Series([pred['probabilities'][1] for pred in pred_dicts])
df_dfc = pd.DataFrame([pred['dfc'] for pred in pred_dicts])
print(df_dfc.describe().T)

# Sum of DFCs + bias == probabality.
bias = pred_dicts[0]['bias']
dfc_prob = df_dfc.sum(axis=1) + bias
np.testing.assert_almost_equal(dfc_prob.values,
                               probs.values)

# Plot results.
ID = 182
example = df_dfc.iloc[ID]  # Choose ith example from evaluation set.
TOP_N = 8  # View top 8 features.
sorted_ix = example.abs().sort_values()[-TOP_N:].index

importances = est.experimental_feature_importances(normalize=True)
df_imp = pd.Series(importances)

dfc_mean = df_dfc.abs().mean()
N = 8
sorted_ix_mean = dfc_mean.abs().sort_values()[-N:].index  # Average and sort by absolute.

def permutation_importances(est, X_eval, y_eval, metric, features):
    """Column by column, shuffle values and observe effect on eval set.

    source: http://explained.ai/rf-importance/index.html
    A similar approach can be done during training. See "Drop-column importance"
    in the above article."""
    baseline = metric(est, X_eval, y_eval)
    imp = []
    for col in features:
        save = X_eval[col].copy()
        X_eval[col] = np.random.permutation(X_eval[col])
        m = metric(est, X_eval, y_eval)
        X_eval[col] = save
        imp.append(baseline - m)
    return np.array(imp)

def accuracy_metric(est, X, y):
    """TensorFlow estimator accuracy."""
    eval_input_fn = make_input_fn(X,
                                  y=y,
                                  shuffle=False,
                                  n_epochs=1)
    return est.evaluate(input_fn=eval_input_fn)['accuracy']
features = CATEGORICAL_COLUMNS + NUMERIC_COLUMNS
perm_importances = permutation_importances(est, dfeval, y_eval, accuracy_metric,
                                      features)
df_perm = pd.Series(perm_importances, index=features)

first = pred_dicts[0]
RESULT.update(
    {
        "num_explanations": len(pred_dicts),
        "explanation_keys": sorted(first),
        "dfc_type": type(first["dfc"]).__name__,
        "dfc_keys_in_order": list(first["dfc"]),
        "dfc_columns": sorted(df_dfc.columns),
        "bias": float(bias),
        "bias_same_for_all": bool(len({float(p["bias"]) for p in pred_dicts}) == 1),
        "dfc_sum_max_error": float(np.max(np.abs(dfc_prob.values - probs.values))),
        "probs_first5": [float(p) for p in probs[:5]],
        "probs_mean": float(probs.mean()),
        "example_182_dfc": {k: float(v) for k, v in example.items()},
        "example_182_top8": sorted(sorted_ix),
        "example_182_prob": float(probs[ID]),
        "dfc_abs_mean": {k: float(v) for k, v in dfc_mean.items()},
        "dfc_abs_mean_top8": sorted(sorted_ix_mean),
        "importances_type": type(importances).__name__,
        "importances_keys_in_order": list(importances),
        "importances": {k: float(v) for k, v in importances.items()},
        "importances_sum": float(sum(importances.values())),
        "permutation_importances": {k: float(v) for k, v in df_perm.items()},
        "in_memory_global_step_variable": int(est.get_variable_value("global_step")),
    }
)

from numpy.random import seed, uniform  # noqa: E402 (as published)

# Create fake data
seed(0)
npts = 5000
x = uniform(-2, 2, npts)
y = uniform(-2, 2, npts)
z = x*np.exp(-x**2 - y**2)
xy = np.zeros((2,np.size(x)))
xy[0] = x
xy[1] = y
xy = xy.T

# Prep data for training.
df = pd.DataFrame({'x': x, 'y': y, 'z': z})

xi = np.linspace(-2.0, 2.0, 200),
yi = np.linspace(-2.1, 2.1, 210),
xi,yi = np.meshgrid(xi, yi)

df_predict = pd.DataFrame({
    'x' : xi.flatten(),
    'y' : yi.flatten(),
})
predict_shape = xi.shape

fc = [tf.feature_column.numeric_column('x'),
      tf.feature_column.numeric_column('y')]

def predict(est):
  """Predictions from a given estimator."""
  predict_input_fn = lambda: tf.data.Dataset.from_tensors(dict(df_predict))  # noqa: E731
  preds = np.array([p['predictions'][0] for p in est.predict(predict_input_fn)])
  return preds.reshape(predict_shape)

train_input_fn = make_input_fn(df, df.z)
est = tf.estimator.LinearRegressor(fc)
est.train(train_input_fn, max_steps=500)

linear_grid = predict(est)
linear_regressor_step = int(est.get_variable_value("global_step"))

n_trees = 37 #@param {type: "slider", min: 1, max: 80, step: 1}

est = tf.estimator.BoostedTreesRegressor(fc, n_batches_per_layer=1, n_trees=n_trees)
est.train(train_input_fn, max_steps=500)
trees_grid = predict(est)

z_grid = xi * np.exp(-xi**2 - yi**2)
RESULT.update(
    {
        "predict_shape": list(predict_shape),
        "linear_regressor_grid_shape": list(linear_grid.shape),
        "linear_regressor_grid_mse": float(np.mean((linear_grid - z_grid) ** 2)),
        "linear_regressor_global_step": linear_regressor_step,
        "trees_regressor_grid_shape": list(trees_grid.shape),
        "trees_regressor_grid_mse": float(np.mean((trees_grid - z_grid) ** 2)),
        "trees_regressor_grid_corr": float(
            np.corrcoef(trees_grid.ravel(), z_grid.ravel())[0, 1]
        ),
        "trees_regressor_global_step": int(est.get_variable_value("global_step")),
        "z_grid_variance": float(np.var(z_grid)),
    }
)
print("RESULT " + json.dumps(RESULT, sort_keys=True))
