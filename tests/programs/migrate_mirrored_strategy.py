"""The TF1 cell of TensorFlow's "Migrate single-worker multiple-GPU training" guide.

site/en/guide/migrate/mirrored_strategy.ipynb (tensorflow/docs): a model_fn
of one `tf1.layers.Dense(1)` with v1 Adagrad under a
`tf1.distribute.MirroredStrategy()` given as both `train_distribute` and
`eval_distribute` of a RunConfig, run by `train_and_evaluate` with a
TrainSpec and an EvalSpec without steps over 3 examples in batches of 1.

Changes from the guide: none to its code (on this machine the strategy
mirrors over the one CPU). The RESULT line records what train_and_evaluate
returned and the model_dir.
"""

import json
import os

import tensorflow as tf  # noqa: F401  (the guide imports it)
import tensorflow.compat.v1 as tf1

features = [[1., 1.5], [2., 2.5], [3., 3.5]]
labels = [[0.3], [0.5], [0.7]]
eval_features = [[4., 4.5], [5., 5.5], [6., 6.5]]
eval_labels = [[0.8], [0.9], [1.]]

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

strategy = tf1.distribute.MirroredStrategy()
config = tf1.estimator.RunConfig(
    train_distribute=strategy, eval_distribute=strategy)
estimator = tf1.estimator.Estimator(model_fn=_model_fn, config=config)

train_spec = tf1.estimator.TrainSpec(input_fn=_input_fn)
eval_spec = tf1.estimator.EvalSpec(input_fn=_eval_input_fn)
returned = tf1.estimator.train_and_evaluate(estimator, train_spec, eval_spec)

metrics, exports = returned if returned else (None, None)
model_dir = estimator.model_dir
result = {
    "num_replicas": strategy.num_replicas_in_sync,
    "global_step": int(estimator.get_variable_value("global_step")),
    "returned_metric_keys": sorted(metrics) if metrics else None,
    "returned_global_step": int(metrics["global_step"]) if metrics else None,
    "eval_loss": float(metrics["loss"]) if metrics else None,
    "returned_exports": exports,
    "latest_checkpoint": os.path.basename(tf1.train.latest_checkpoint(model_dir)),
    "has_eval_dir": os.path.isdir(os.path.join(model_dir, "eval")),
    "variable_names": estimator.get_variable_names(),
}
print("RESULT " + json.dumps(result, sort_keys=True))
