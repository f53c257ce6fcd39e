"""The TF1 cells of TensorFlow's "Debug a TF2 migrated training pipeline" guide.

site/en/guide/migrate/migration_debugging.ipynb (tensorflow/docs), "Model
training numerical equivalence validation for a few steps": an Estimator
model_fn (three `tf.compat.v1.layers.dense`, softmax cross-entropy,
`polynomial_decay` of the learning rate on the global step, v1
GradientDescent's compute_gradients / apply_gradients) returning a
`tf.estimator.EstimatorSpec`, called by the program itself in a TF1 graph
and session under `tf.compat.v1.keras.utils.DeterministicRandomTestTool`,
and run 3 steps, logging the step, learning rate, loss, gradients and
layer outputs of each.

Changes from the guide: the `!pip install "tensorflow==2.9.*"` cell is left
out. The RESULT line records the logs of the 3 steps.
"""

import json
import sys  # noqa: F401  (the guide imports it)
import unittest  # noqa: F401  (the guide imports it)

import numpy as np
import tensorflow as tf
import tensorflow.compat.v1 as v1

params = {
    'input_size': 3,
    'num_classes': 3,
    'layer_1_size': 2,
    'layer_2_size': 2,
    'num_train_steps': 100,
    'init_lr': 1e-3,
    'end_lr': 0.0,
    'decay_steps': 1000,
    'lr_power': 1.0,
}

# make a small fixed dataset
fake_x = np.ones((2, params['input_size']), dtype=np.float32)
fake_y = np.zeros((2, params['num_classes']), dtype=np.int32)
fake_y[0][0] = 1
fake_y[1][1] = 1

step_num = 3

# Assume there is an existing TF1.x model using estimator API
# Wrap the model_fn to log necessary tensors for result comparison
class SimpleModelWrapper:
  def __init__(self):
    self.logged_ops = {}
    self.logs = {
        'step': [],
        'lr': [],
        'loss': [],
        'grads_and_vars': [],
        'layer_out': []}

  def model_fn(self, features, labels, mode, params):
      out_1 = tf.compat.v1.layers.dense(features, units=params['layer_1_size'])
      out_2 = tf.compat.v1.layers.dense(out_1, units=params['layer_2_size'])
      logits = tf.compat.v1.layers.dense(out_2, units=params['num_classes'])
      loss = tf.compat.v1.losses.softmax_cross_entropy(labels, logits)

      # skip EstimatorSpec details for prediction and evaluation
      if mode == tf.estimator.ModeKeys.PREDICT:
          pass
      if mode == tf.estimator.ModeKeys.EVAL:
          pass
      assert mode == tf.estimator.ModeKeys.TRAIN

      global_step = tf.compat.v1.train.get_or_create_global_step()
      lr = tf.compat.v1.train.polynomial_decay(
        learning_rate=params['init_lr'],
        global_step=global_step,
        decay_steps=params['decay_steps'],
        end_learning_rate=params['end_lr'],
        power=params['lr_power'])

      optmizer = tf.compat.v1.train.GradientDescentOptimizer(lr)
      grads_and_vars = optmizer.compute_gradients(
          loss=loss,
          var_list=graph.get_collection(
              tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES))
      train_op = optmizer.apply_gradients(
          grads_and_vars,
          global_step=global_step)

      # log tensors
      self.logged_ops['step'] = global_step
      self.logged_ops['lr'] = lr
      self.logged_ops['loss'] = loss
      self.logged_ops['grads_and_vars'] = grads_and_vars
      self.logged_ops['layer_out'] = {
          'layer_1': out_1,
          'layer_2': out_2,
          'logits': logits}

      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

  def update_logs(self, logs):
    for key in logs.keys():
      model_tf1.logs[key].append(logs[key])

random_tool = v1.keras.utils.DeterministicRandomTestTool(mode='num_random_ops')

with random_tool.scope():
  graph = tf.Graph()
  with graph.as_default(), tf.compat.v1.Session(graph=graph) as sess:
    model_tf1 = SimpleModelWrapper()
    # build the model
    inputs = tf.compat.v1.placeholder(tf.float32, shape=(None, params['input_size']))
    labels = tf.compat.v1.placeholder(tf.float32, shape=(None, params['num_classes']))
    spec = model_tf1.model_fn(inputs, labels, tf.estimator.ModeKeys.TRAIN, params)
    train_op = spec.train_op

    sess.run(tf.compat.v1.global_variables_initializer())
    for step in range(step_num):  # noqa: B007  (the guide's)
      # log everything and update the model for one step
      logs, _ = sess.run(
          [model_tf1.logged_ops, train_op],
          feed_dict={inputs: fake_x, labels: fake_y})
      model_tf1.update_logs(logs)

result = {
    "step": [int(s) for s in model_tf1.logs["step"]],
    "lr": [float(v) for v in model_tf1.logs["lr"]],
    "loss": [float(v) for v in model_tf1.logs["loss"]],
    "logits_shape": list(np.shape(model_tf1.logs["layer_out"][0]["logits"])),
    "num_grads_and_vars": len(model_tf1.logs["grads_and_vars"][0]),
}
print("RESULT " + json.dumps(result, sort_keys=True))
