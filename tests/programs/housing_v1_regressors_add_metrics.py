"""Google Cloud's "Neural Network" notebook (art and science of ML), as published.

GoogleCloudPlatform/training-data-analyst,
courses/machine_learning/deepdive/05_artandscience/c_neuralnetwork.ipynb
(updated for TF 2.5 in July 2021), its code cells in order: California
housing in a pandas frame with per-household features, numeric and
bucketized feature columns passed as `featcols.values()` (a dict view),
`tf.compat.v1.estimator.inputs.pandas_input_fn` for training (endless,
shuffled, batches of 100) and evaluation (one batch of the whole eval frame),
the v1 canned `tf.compat.v1.estimator.LinearRegressor` and then
`tf.compat.v1.estimator.DNNRegressor` (dropout 0.1), both with a v1
`FtrlOptimizer(0.01)` object, each given an RMSE in dollars by
`tf.compat.v1.estimator.add_metrics` (labels and float64 predictions times
SCALE), and run by `tf.estimator.train_and_evaluate` for
`(100 * len(traindf)) / BATCH_SIZE` steps, a float.

Adapted: local data (tests/programs/data/california_housing_train.csv, 1000
rows written by generate_california_housing.py, instead of the 17000-row
download, so the step count the notebook computes is about 800, not 13600),
OUTDIR in a temporary directory, the display-only cells (`df.head()`,
`df.describe()`, `featcols.keys()`) left out. The RESULT line at the end
(read from each run's eval events and checkpoint) is added.
"""

import json
import math  # noqa: F401  (the notebook imports it)
import os
import shutil
import tempfile

import numpy as np
import pandas as pd
import tensorflow as tf

tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
pd.options.display.max_rows = 10
pd.options.display.float_format = '{:.1f}'.format

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def eval_summaries(eval_dir):
    """The scalars of the evaluation events written to eval_dir (the last wins)."""
    values = {}
    for name in sorted(tf.io.gfile.listdir(eval_dir)):
        for event in tf.compat.v1.train.summary_iterator(os.path.join(eval_dir, name)):
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    values[value.tag] = float(value.simple_value)
                elif value.tensor.dtype != tf.string.as_datatype_enum:
                    values[value.tag] = float(tf.make_ndarray(value.tensor))
    return values


def summarize(output_dir):
    metrics = eval_summaries(os.path.join(output_dir, "eval"))
    return {
        "global_step": int(tf.train.load_variable(output_dir, "global_step")),
        "eval_keys": sorted(metrics),
        "rmse": round(metrics["rmse"], 1),
        "average_loss": round(metrics["average_loss"], 5),
        "loss": round(metrics["loss"], 4),
        "label_mean": round(metrics["label/mean"], 5),
        "prediction_mean": round(metrics["prediction/mean"], 5),
        "variables": sorted(
            name for name, _ in tf.train.list_variables(output_dir)
            if "Ftrl" not in name and "ftrl" not in name
        ),
    }


df = pd.read_csv(os.path.join(DATA, "california_housing_train.csv"), sep=",")

df['num_rooms'] = df['total_rooms'] / df['households']
df['num_bedrooms'] = df['total_bedrooms'] / df['households']
df['persons_per_house'] = df['population'] / df['households']
df.describe()

df.drop(['total_rooms', 'total_bedrooms', 'population', 'households'], axis = 1, inplace = True)
df.describe()

featcols = {
  colname : tf.feature_column.numeric_column(colname) \
    for colname in 'housing_median_age,median_income,num_rooms,num_bedrooms,persons_per_house'.split(',')
}
# Bucketize lat, lon so it's not so high-res; California is mostly N-S, so more lats than lons
featcols['longitude'] = tf.feature_column.bucketized_column(tf.feature_column.numeric_column('longitude'),
                                                   np.linspace(-124.3, -114.3, 5).tolist())
featcols['latitude'] = tf.feature_column.bucketized_column(tf.feature_column.numeric_column('latitude'),
                                                  np.linspace(32.5, 42, 10).tolist())

# Split into train and eval
msk = np.random.rand(len(df)) < 0.8
traindf = df[msk]
evaldf = df[~msk]

SCALE = 100000
BATCH_SIZE= 100
OUTDIR = os.path.join(tempfile.mkdtemp(), 'housing_trained')
train_input_fn = tf.compat.v1.estimator.inputs.pandas_input_fn(x = traindf[list(featcols.keys())],
                                                    y = traindf["median_house_value"] / SCALE,
                                                    num_epochs = None,
                                                    batch_size = BATCH_SIZE,
                                                    shuffle = True)
eval_input_fn = tf.compat.v1.estimator.inputs.pandas_input_fn(x = evaldf[list(featcols.keys())],
                                                    y = evaldf["median_house_value"] / SCALE,  # note the scaling
                                                    num_epochs = 1,
                                                    batch_size = len(evaldf),
                                                    shuffle=False)

# Linear Regressor
def train_and_evaluate(output_dir, num_train_steps):
  myopt = tf.compat.v1.train.FtrlOptimizer(learning_rate = 0.01) # note the learning rate
  estimator = tf.compat.v1.estimator.LinearRegressor(
                       model_dir = output_dir,
                       feature_columns = featcols.values(),
                       optimizer = myopt)

  #Add rmse evaluation metric
  def rmse(labels, predictions):
    pred_values = tf.cast(predictions['predictions'],tf.float64)
    return {'rmse': tf.compat.v1.metrics.root_mean_squared_error(labels*SCALE, pred_values*SCALE)}
  estimator = tf.compat.v1.estimator.add_metrics(estimator,rmse)

  train_spec=tf.estimator.TrainSpec(
                       input_fn = train_input_fn,
                       max_steps = num_train_steps)
  eval_spec=tf.estimator.EvalSpec(
                       input_fn = eval_input_fn,
                       steps = None,
                       start_delay_secs = 1, # start evaluating after N seconds
                       throttle_secs = 10,  # evaluate every N seconds
                       )
  tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)

# Run training
shutil.rmtree(OUTDIR, ignore_errors = True) # start fresh each time
train_and_evaluate(OUTDIR, num_train_steps = (100 * len(traindf)) / BATCH_SIZE)
linear = summarize(OUTDIR)

# DNN Regressor
def train_and_evaluate(output_dir, num_train_steps):  # noqa: F811  (the notebook redefines it)
  myopt = tf.compat.v1.train.FtrlOptimizer(learning_rate = 0.01) # note the learning rate
  estimator = tf.compat.v1.estimator.DNNRegressor(model_dir = output_dir,
                                hidden_units = [100, 50, 20],
                                feature_columns = featcols.values(),
                                optimizer = myopt,
                                dropout = 0.1)

  #Add rmse evaluation metric
  def rmse(labels, predictions):
    pred_values = tf.cast(predictions['predictions'],tf.float64)
    return {'rmse': tf.compat.v1.metrics.root_mean_squared_error(labels*SCALE, pred_values*SCALE)}
  estimator = tf.compat.v1.estimator.add_metrics(estimator,rmse)

  train_spec=tf.estimator.TrainSpec(
                       input_fn = train_input_fn,
                       max_steps = num_train_steps)
  eval_spec=tf.estimator.EvalSpec(
                       input_fn = eval_input_fn,
                       steps = None,
                       start_delay_secs = 1, # start evaluating after N seconds
                       throttle_secs = 10,  # evaluate every N seconds
                       )
  tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)

# Run training
shutil.rmtree(OUTDIR, ignore_errors = True) # start fresh each time
tf.compat.v1.summary.FileWriterCache.clear()
train_and_evaluate(OUTDIR, num_train_steps = (100 * len(traindf)) / BATCH_SIZE)
dnn = summarize(OUTDIR)

label_std = float((evaldf["median_house_value"]).std(ddof=0))
num_train_steps = (100 * len(traindf)) / BATCH_SIZE
# The split is the notebook's unseeded `np.random.rand(len(df)) < 0.8`, so the
# row counts (and the step count computed from them) differ from run to run:
# the result reports how the figures relate to them.
result = {
    "num_train_steps_type": type(num_train_steps).__name__,
    "rows": len(traindf) + len(evaldf),
    "train_fraction_in_0.7_0.9": 0.7 < len(traindf) / len(df) < 0.9,
}
for prefix, values in (("linear", linear), ("dnn", dnn)):
    for key in ("eval_keys", "average_loss", "rmse", "label_mean", "prediction_mean", "variables"):
        result[f"{prefix}_{key}"] = values[key]
    # Steps past the float max_steps: 0 when training stops at ceil(max_steps).
    result[f"{prefix}_steps_over_max"] = values["global_step"] - int(np.ceil(num_train_steps))
    # RMSE over the eval label spread: 1.0 is the constant mean predictor.
    result[f"{prefix}_rmse_over_std"] = round(values["rmse"] / label_std, 4)
    # The v1 head's loss is the batch's summed squared error (SUM reduction),
    # and evaluation reads the whole eval frame as one batch.
    result[f"{prefix}_loss_over_average_loss_per_eval_row"] = round(
        values["loss"] / values["average_loss"] / len(evaldf), 4
    )
    # The RMSE metric (labels and float64 predictions times SCALE) against
    # the head's average_loss.
    result[f"{prefix}_rmse_over_sqrt_average_loss"] = round(
        values["rmse"] / SCALE / values["average_loss"] ** 0.5, 3
    )
print("RESULT " + json.dumps(result, sort_keys=True))
