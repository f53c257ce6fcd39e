"""The TF1 cells of TensorFlow's "Migrate multi-worker CPU/GPU training" guide.

site/en/guide/migrate/multi_worker_cpu_gpu_training.ipynb (tensorflow/docs):
a TF_CONFIG of a chief, three workers and two parameter servers on localhost
ports is set, then deleted as the guide does ("so it falls back to local
training"), and a model_fn of one `tf1.layers.Dense(1)` with v1 Adagrad is
trained and evaluated by `train_and_evaluate` with a TrainSpec and an
EvalSpec without steps over 3 examples in batches of 1.

Changes from the guide: none to its TF1 code; the `pip install portpicker`
cell is left out (it serves the TF2 cells only). The RESULT line records
what train_and_evaluate returned and the model_dir.
"""

import json
import os

import tensorflow as tf  # noqa: F401  (the guide imports it)
import tensorflow.compat.v1 as tf1

features = [[1., 1.5], [2., 2.5], [3., 3.5]]
labels = [[0.3], [0.5], [0.7]]
eval_features = [[4., 4.5], [5., 5.5], [6., 6.5]]
eval_labels = [[0.8], [0.9], [1.]]

tf_config = {
    'cluster': {
        'chief': ['localhost:11111'],
        'worker': ['localhost:12345', 'localhost:23456', 'localhost:21212'],
        'ps': ['localhost:12121', 'localhost:13131'],
    },
    'task': {'type': 'chief', 'index': 0}
}

os.environ['TF_CONFIG'] = json.dumps(tf_config)

del os.environ['TF_CONFIG']

def _input_fn():
  return tf1.data.Dataset.from_tensor_slices((features, labels)).batch(1)

def _eval_input_fn():
  return tf1.data.Dataset.from_tensor_slices(
      (eval_features, eval_labels)).batch(1)

def _model_fn(features, labels, mode):
  logits = tf1.layers.Dense(1)(features)
  loss = tf1.losses.mean_squared_error(labels=labels, predictions=logits)
  optimizer = tf1.train.AdagradOptimizer(0.05)
  train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
  return tf1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

estimator = tf1.estimator.Estimator(model_fn=_model_fn)
train_spec = tf1.estimator.TrainSpec(input_fn=_input_fn)
eval_spec = tf1.estimator.EvalSpec(input_fn=_eval_input_fn)
returned = tf1.estimator.train_and_evaluate(estimator, train_spec, eval_spec)

metrics, exports = returned if returned else (None, None)
model_dir = estimator.model_dir
config = estimator.config
result = {
    "task_type": config.task_type,
    "is_chief": config.is_chief,
    "num_worker_replicas": config.num_worker_replicas,
    "global_step": int(estimator.get_variable_value("global_step")),
    "returned_metric_keys": sorted(metrics) if metrics else None,
    "returned_global_step": int(metrics["global_step"]) if metrics else None,
    "eval_loss": float(metrics["loss"]) if metrics else None,
    "returned_exports": exports,
    "latest_checkpoint": os.path.basename(tf1.train.latest_checkpoint(model_dir)),
    "has_eval_dir": os.path.isdir(os.path.join(model_dir, "eval")),
}
print("RESULT " + json.dumps(result, sort_keys=True))
