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
"""Linear regression using the LinearRegressor Estimator.

tensorflow/models' samples/cookbook/regression/linear_regression.py as
published in its TF 2 form (commit 608bd2211d0ed7c8e3c61d2ffa1277d464048ab8:
`tf.compat.v1.logging`, `absl.app.run`), with the cookbook's
automobile_data.py of the same era (its make_dataset's input_fn returns the
batched Dataset) in tests/programs/cookbook_regression/. What runs: a
`tf.estimator.LinearRegressor` (v2: Ftrl) on two raw numeric columns, an
input_fn of `Dataset.from_tensor_slices((dict(DataFrame), Series))`
shuffled, batched by 100 and repeated, train, evaluate's average_loss as the
RMS error, and predict on a dict of numpy arrays batched by 1.

Adapted: local data (automobile_data.raw_dataframe builds
cookbook_custom_regression.py's 200 seeded automobile-like rows instead of
downloading imports-85; load_data's 70/30 split stays unseeded, as published,
and so is the Estimator: runs differ), the sys.path line that finds
automobile_data, and the RESULT line (marked "Added"). The published 1000
steps are kept.
"""

from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import argparse

import numpy as np
import tensorflow as tf
from absl import app

import json  # Added: the RESULT line.
import os  # Added: finds automobile_data.
import sys  # Added: finds automobile_data.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cookbook_regression"))

import automobile_data

parser = argparse.ArgumentParser()
parser.add_argument('--batch_size', default=100, type=int, help='batch size')
parser.add_argument('--train_steps', default=1000, type=int,
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

  feature_columns = [
      # "curb-weight" and "highway-mpg" are numeric columns.
      tf.feature_column.numeric_column(key="curb-weight"),
      tf.feature_column.numeric_column(key="highway-mpg"),
  ]

  # Build the Estimator.
  model = tf.estimator.LinearRegressor(feature_columns=feature_columns)

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

  # Run the model in prediction mode.
  input_dict = {
      "curb-weight": np.array([2000, 3000]),
      "highway-mpg": np.array([30, 40])
  }

  # Provide the predict input dataset.
  predict_input_fn = automobile_data.make_dataset(1, input_dict)
  predict_results = model.predict(input_fn=predict_input_fn)

  # Print the prediction results.
  print("\nPrediction results:")
  for i, prediction in enumerate(predict_results):
    msg = ("Curb weight: {: 4d}lbs, "
           "Highway: {: 0d}mpg, "
           "Prediction: ${: 9.2f}")
    msg = msg.format(input_dict["curb-weight"][i], input_dict["highway-mpg"][i],
                     args.price_norm_factor * prediction["predictions"][0])

    print("    " + msg)
  print()

  # Added: the RESULT line. The two published inputs are worth 12000 - 4500 =
  # $7500 and 18000 - 6000 = $12000 by the data's rule (before noise).
  predictions = list(model.predict(input_fn=predict_input_fn))
  test_predictions = list(model.predict(
      input_fn=automobile_data.make_dataset(args.batch_size, test_x)))
  print("RESULT " + json.dumps({
      "global_step": int(eval_result["global_step"]),
      "metric_keys": sorted(eval_result),
      "rmse": round(float(average_loss) ** 0.5, 3),
      # Against predicting the test labels' mean (1.0); the split is unseeded.
      "rmse_over_label_std": round(
          float(average_loss) ** 0.5 / float(np.std(test_y)), 3),
      "label_mean_matches": bool(abs(
          float(eval_result["label/mean"]) - float(np.mean(test_y))) < 1e-3),
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
  app.run(main=main)
