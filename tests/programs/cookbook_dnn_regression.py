# Copyright 2016 The TensorFlow Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""Regression using the DNNRegressor Estimator.

tensorflow/models' samples/cookbook/regression/dnn_regression.py as last
published with automobile_data.make_dataset (commit
a4b1d8a3cc5114814d15dbba7a44f75055a1315d), with the cookbook's
automobile_data.py of the TF 2 era (its make_dataset's input_fn returns the
batched Dataset) in tests/programs/cookbook_regression/. What runs: a
`tf.estimator.DNNRegressor` (v2: Adagrad) with 2x20 hidden units over two raw
numeric columns, an indicator column of a vocabulary list and a 3-dimensional
embedding column of a 50-bucket hashed column, an input_fn of
`Dataset.from_tensor_slices((dict(DataFrame), Series))` shuffled, batched by
100 and repeated, train, and evaluate's average_loss as the RMS error.

No published version found ran on TF 2.15 unchanged: both (a4b1d8a and the
earlier 4238b81e61cacaaa72e27ea3e18561e3fd5a3726, whose input_fns call
`make_one_shot_iterator`) end with `tf.logging.set_verbosity(tf.logging.INFO)`
and `tf.app.run(main=main)`, names TF 2 removed (versions of linear_regression.py and
custom_regression.py moved to tf.compat.v1 exist; none of this file was found).
Only these mechanical renames are applied: tf.logging ->
tf.compat.v1.logging, tf.app.run -> tf.compat.v1.app.run.

Adapted: local data (automobile_data.raw_dataframe builds
cookbook_custom_regression.py's 200 seeded automobile-like rows instead of
downloading imports-85; load_data's 70/30 split stays unseeded, as published,
and so is the Estimator: runs differ), the sys.path line that finds
automobile_data, and the RESULT line (marked "Added"). The published 5000
steps are kept.
"""

from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import argparse

import tensorflow as tf

import json  # Added: the RESULT line.
import os  # Added: finds automobile_data.
import sys  # Added: finds automobile_data.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cookbook_regression"))

import automobile_data

parser = argparse.ArgumentParser()
parser.add_argument('--batch_size', default=100, type=int, help='batch size')
parser.add_argument('--train_steps', default=5000, type=int,
                    help='number of training steps')
parser.add_argument('--price_norm_factor', default=1000., type=float,
                    help='price normalization factor')


def main(argv):
  """Builds, trains, and evaluates the model."""
  args = parser.parse_args(argv[1:])

  (train_x,train_y), (test_x, test_y) = automobile_data.load_data()

  train_y /= args.price_norm_factor
  test_y /= args.price_norm_factor

  # Provide the training input dataset.
  train_input_fn = automobile_data.make_dataset(args.batch_size, train_x, train_y, True, 1000)

  # Provide the validation input dataset.
  test_input_fn = automobile_data.make_dataset(args.batch_size, test_x, test_y)

  # Use the same categorical columns as in `linear_regression_categorical`
  body_style_vocab = ["hardtop", "wagon", "sedan", "hatchback", "convertible"]
  body_style_column = tf.feature_column.categorical_column_with_vocabulary_list(
      key="body-style", vocabulary_list=body_style_vocab)
  make_column = tf.feature_column.categorical_column_with_hash_bucket(
      key="make", hash_bucket_size=50)

  feature_columns = [
      tf.feature_column.numeric_column(key="curb-weight"),
      tf.feature_column.numeric_column(key="highway-mpg"),
      # Since this is a DNN model, categorical columns must be converted from
      # sparse to dense.
      # Wrap them in an `indicator_column` to create a
      # one-hot vector from the input.
      tf.feature_column.indicator_column(body_style_column),
      # Or use an `embedding_column` to create a trainable vector for each
      # index.
      tf.feature_column.embedding_column(make_column, dimension=3),
  ]

  # Build a DNNRegressor, with 2x20-unit hidden layers, with the feature columns
  # defined above as input.
  model = tf.estimator.DNNRegressor(
      hidden_units=[20, 20], feature_columns=feature_columns)

  # Train the model.
  # By default, the Estimators log output every 100 steps.
  model.train(input_fn=train_input_fn, steps=args.train_steps)

  # Evaluate how the model performs on data it has not yet seen.
  eval_result = model.evaluate(input_fn=test_input_fn)

  # The evaluation returns a Python dictionary. The "average_loss" key holds the
  # Mean Squared Error (MSE).
  average_loss = eval_result["average_loss"]

  # Convert MSE to Root Mean Square Error (RMSE).
  print("\n" + 80 * "*")
  print("\nRMS error for the test set: ${:.0f}"
        .format(args.price_norm_factor * average_loss**0.5))

  print()

  # Added: the RESULT line: evaluate's metrics, predictions on the test set and
  # on two cars worth 12000 - 4500 = $7500 and 18000 - 6000 + 6000 + 5000 =
  # $23000 by the data's rule (before noise).
  input_dict = {
      "curb-weight": [2000.0, 3000.0],
      "highway-mpg": [30.0, 40.0],
      "body-style": ["sedan", "convertible"],
      "make": ["honda", "bmw"],
  }
  predictions = list(model.predict(
      input_fn=automobile_data.make_dataset(1, input_dict)))
  test_predictions = list(model.predict(
      input_fn=automobile_data.make_dataset(args.batch_size, test_x)))
  print("RESULT " + json.dumps({
      "global_step": int(eval_result["global_step"]),
      "metric_keys": sorted(eval_result),
      "rmse": round(float(average_loss) ** 0.5, 3),
      # Against predicting the test labels' mean (1.0); the split is unseeded.
      "rmse_over_label_std": round(
          float(average_loss) ** 0.5 / float(test_y.std(ddof=0)), 3),
      "label_mean_matches": bool(abs(
          float(eval_result["label/mean"]) - float(test_y.mean())) < 1e-3),
      "loss_over_average_loss": round(
          float(eval_result["loss"]) / float(average_loss), 3),
      "prediction_mean_minus_label_mean": round(float(
          eval_result["prediction/mean"] - eval_result["label/mean"]), 3),
      "num_test_predictions": len(test_predictions),
      "prediction_keys": sorted(predictions[0]),
      "prediction_shape": list(predictions[0]["predictions"].shape),
      "predicted_prices": [
          round(float(p["predictions"][0]), 3) for p in predictions],
  }, sort_keys=True))


if __name__ == "__main__":
  # The Estimator periodically generates "INFO" logs; make these logs visible.
  tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
  tf.compat.v1.app.run(main=main)
