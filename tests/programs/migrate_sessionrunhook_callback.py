"""The TF1 cell of TensorFlow's "Migrate SessionRunHook to Keras callbacks" guide.

site/en/guide/migrate/sessionrunhook_callback.ipynb (tensorflow/docs): a
model_fn of one `tf1.layers.Dense(1)` with v1 Adagrad, trained by
`Estimator.train` without steps over 3 examples in batches of 1 repeated 100
times (300 steps), with a custom `tf1.train.SessionRunHook` that counts its
runs from `begin()` and prints the time, the step and the examples per second
every 10 runs.

Changes from the guide: none to its code. What the program prints is also
recorded (a pass-through of sys.stdout) for the RESULT line.
"""

import json
import re
import sys
import time
from datetime import datetime

import tensorflow.compat.v1 as tf1
from absl import flags  # noqa: F401  (the guide imports it)


class Printed:
    """sys.stdout that also keeps what is printed."""

    def __init__(self, stream):
        self.stream = stream
        self.text = []

    def write(self, text):
        self.text.append(text)
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()


printed = sys.stdout = Printed(sys.stdout)

features = [[1., 1.5], [2., 2.5], [3., 3.5]]
labels = [[0.3], [0.5], [0.7]]
eval_features = [[4., 4.5], [5., 5.5], [6., 6.5]]
eval_labels = [[0.8], [0.9], [1.]]

def _input_fn():
  return tf1.data.Dataset.from_tensor_slices(
      (features, labels)).batch(1).repeat(100)

def _model_fn(features, labels, mode):
  logits = tf1.layers.Dense(1)(features)
  loss = tf1.losses.mean_squared_error(labels=labels, predictions=logits)
  optimizer = tf1.train.AdagradOptimizer(0.05)
  train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
  return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

class LoggerHook(tf1.train.SessionRunHook):
  """Logs loss and runtime."""

  def begin(self):
    self._step = -1
    self._start_time = time.time()
    self.log_frequency = 10

  def before_run(self, run_context):
    self._step += 1

  def after_run(self, run_context, run_values):
    if self._step % self.log_frequency == 0:
      current_time = time.time()
      duration = current_time - self._start_time
      self._start_time = current_time
      examples_per_sec = self.log_frequency / duration
      print('Time:', datetime.now(), ', Step #:', self._step,
            ', Examples per second:', examples_per_sec)

estimator = tf1.estimator.Estimator(model_fn=_model_fn)

# Begin training.
estimator.train(_input_fn, hooks=[LoggerHook()])

sys.stdout = printed.stream
lines = [line for line in "".join(printed.text).splitlines() if line.startswith("Time:")]
rates = [float(line.rsplit(": ", 1)[1]) for line in lines]
result = {
    "global_step": int(estimator.get_variable_value("global_step")),
    "printed_steps": [int(re.search(r"Step #: (\d+)", line).group(1)) for line in lines],
    "rates_positive": all(rate > 0 for rate in rates),
    "line_form": re.sub(r"[\d.:-]+", "N", lines[0]) if lines else None,
    "variable_names": estimator.get_variable_names(),
    "loss": float(estimator.evaluate(_input_fn, steps=3)["loss"]),
    "kernel": estimator.get_variable_value("dense/kernel").ravel().tolist(),
    "bias": estimator.get_variable_value("dense/bias").ravel().tolist(),
}
print("RESULT " + json.dumps(result, sort_keys=True))
