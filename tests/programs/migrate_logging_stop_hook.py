"""The TF1 cell of TensorFlow's "LoggingTensorHook and StopAtStepHook" guide.

site/en/guide/migrate/logging_stop_hook.ipynb (tensorflow/docs): a model_fn
of one `tf1.layers.Dense(1)` with v1 Adagrad returns a `StopAtStepHook(
num_steps=2)`, a `LoggingTensorHook` of two unnamed `tf.identity` tensors
(the kernel and the bias, logged by their graph names every step) and one of
the loss under a dict key (every 3 seconds) as training_hooks; `train()`
without steps over a 3-example, batch-1 dataset stops after 2 steps.

Changes from the guide: none to its code. The guide ran in a notebook, which
showed TensorFlow's INFO log; here INFO logging is turned on and the lines
logged are recorded for the RESULT line.
"""

import json
import logging
import re

import tensorflow as tf
import tensorflow.compat.v1 as tf1


class LoggedLines(logging.Handler):
    """Keeps the messages TensorFlow's logger emits."""

    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


logged = LoggedLines()
tf.get_logger().addHandler(logged)
tf1.logging.set_verbosity(tf1.logging.INFO)

features = [[1., 1.5], [2., 2.5], [3., 3.5]]
labels = [[0.3], [0.5], [0.7]]

# define input function
def _input_fn():
  return tf1.data.Dataset.from_tensor_slices((features, labels)).batch(1)

def _model_fn(features, labels, mode):
  dense = tf1.layers.Dense(1)
  logits = dense(features)
  loss = tf1.losses.mean_squared_error(labels=labels, predictions=logits)
  optimizer = tf1.train.AdagradOptimizer(0.05)
  train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())

  # build the stop hook
  stop_hook = tf1.train.StopAtStepHook(num_steps=2)

  # access tensors to be logged by names
  kernel_name = tf.identity(dense.weights[0])
  bias_name = tf.identity(dense.weights[1])
  logging_weight_hook = tf1.train.LoggingTensorHook(
      tensors=[kernel_name, bias_name],
      every_n_iter=1)
  # log training loss by the tensor object
  logging_loss_hook = tf1.train.LoggingTensorHook(
      {'loss from LoggingTensorHook': loss},
      every_n_secs=3)

  # pass all hooks to EstimatorSpec
  return tf1.estimator.EstimatorSpec(mode,
                                     loss=loss,
                                     train_op=train_op,
                                     training_hooks=[stop_hook,
                                                     logging_weight_hook,
                                                     logging_loss_hook])

estimator = tf1.estimator.Estimator(model_fn=_model_fn)

# the training will stop after 2 steps, and the weights/loss are logged as well
estimator.train(_input_fn)


def numbers(text):
    return [float(n) for n in re.findall(r"-?\d+\.\d*(?:e[-+]?\d+)?", text)]


weight_lines = [line for line in logged.lines if line.startswith("Tensor(\"Identity")]
hook_losses = [
    line for line in logged.lines if line.startswith("loss from LoggingTensorHook = ")
]
step_losses = [
    line for line in logged.lines if re.match(r"loss = \S+, step = \d+$", line)
]
kernel = estimator.get_variable_value("dense/kernel")
result = {
    "global_step": int(estimator.get_variable_value("global_step")),
    "variable_names": estimator.get_variable_names(),
    # Each line's tags, and whether it ends with the time since the last one.
    "weight_line_tags": [re.findall(r"(Tensor\(.*?\)) = ", line) for line in weight_lines],
    "weight_line_timed": [bool(re.search(r" \(\d+\.\d+ sec\)$", line))
                          for line in weight_lines],
    "logged_bias_at_first_step": numbers(weight_lines[0])[2] if weight_lines else None,
    "logged_kernel_at_first_step": numbers(weight_lines[0])[:2] if weight_lines else None,
    "hook_loss_lines": len(hook_losses),
    "hook_loss_equals_step_0_loss": bool(hook_losses and step_losses)
    and numbers(hook_losses[0]) == numbers(step_losses[0].split(",")[0]),
    "step_loss_steps": [int(line.rsplit("= ", 1)[1]) for line in step_losses],
    "final_kernel": [float(v) for v in kernel.ravel()],
    "final_bias": float(estimator.get_variable_value("dense/bias")[0]),
    "checkpoint_lines": [
        re.sub(r"/\S+", "DIR", line) for line in logged.lines
        if line.startswith("Saving checkpoints for")
    ],
}
print("RESULT " + json.dumps(result, sort_keys=True))
