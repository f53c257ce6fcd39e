"""The Estimator cells of TensorFlow's "Migrate checkpoints" guide.

site/en/guide/migrate/migrating_checkpoints.ipynb (tensorflow/docs), "TF2
checkpoints in Estimator": a model_fn adding 2 to a `tf1.get_variable` each
step with `train_op=tf.group(v.assign_add(2), train_step.assign_add(1))` is
trained one step into a name-based checkpoint; then a model_fn building the
same variable hands `Scaffold(saver=tf.train.Checkpoint(var_list={'var': v},
step=train_step))` to the EstimatorSpec, warm-starts from the first
model_dir and trains one more step, and the guide asserts the object-based
key `var_list/var/.ATTRIBUTES/VARIABLE_VALUE` holds 4.

Changes from the guide: the `!rm -rf` shell lines are Python, and the
guide's relative model_dirs are made in a temporary working directory. The
RESULT line records what `print_checkpoint` printed.
"""

import json
import os
import shutil
import tempfile

import tensorflow as tf
import tensorflow.compat.v1 as tf1

os.chdir(tempfile.mkdtemp())
printed = {}

def print_checkpoint(save_path):
  reader = tf.train.load_checkpoint(save_path)
  shapes = reader.get_variable_to_shape_map()
  dtypes = reader.get_variable_to_dtype_map()
  print(f"Checkpoint at '{save_path}':")
  for key in shapes:
    print(f"  (key='{key}', shape={shapes[key]}, dtype={dtypes[key].name}, "
          f"value={reader.get_tensor(key)})")
  printed[os.path.relpath(save_path)] = {
      key: [shapes[key], dtypes[key].name, reader.get_tensor(key).tolist()]
      for key in shapes
      if not key.startswith("_CHECKPOINTABLE_OBJECT_GRAPH")
  }

def model_fn_tf1_ckpt(features, labels, mode):
  # This model adds 2 to the variable `v` in every train step.
  train_step = tf1.train.get_or_create_global_step()
  v = tf1.get_variable('var', shape=[], dtype=tf.float32,
                       initializer=tf1.constant_initializer(0))
  return tf.estimator.EstimatorSpec(
      mode,
      predictions=v,
      train_op=tf.group(v.assign_add(2), train_step.assign_add(1)),
      loss=tf.constant(1.),
      scaffold=None
  )

shutil.rmtree('est-tf1', ignore_errors=True)
est = tf.estimator.Estimator(model_fn_tf1_ckpt, 'est-tf1')

def train_fn():
  return tf.data.Dataset.from_tensor_slices(([1,2,3], [4,5,6]))
est.train(train_fn, steps=1)

latest_checkpoint = tf.train.latest_checkpoint('est-tf1')
print_checkpoint(latest_checkpoint)

def model_fn_tf2_ckpt(features, labels, mode):
  # This model adds 2 to the variable `v` in every train step.
  train_step = tf1.train.get_or_create_global_step()
  v = tf1.get_variable('var', shape=[], dtype=tf.float32,
                       initializer=tf1.constant_initializer(0))
  ckpt = tf.train.Checkpoint(var_list={'var': v}, step=train_step)
  return tf.estimator.EstimatorSpec(
      mode,
      predictions=v,
      train_op=tf.group(v.assign_add(2), train_step.assign_add(1)),
      loss=tf.constant(1.),
      scaffold=tf1.train.Scaffold(saver=ckpt)
  )

shutil.rmtree('est-tf2', ignore_errors=True)
est = tf.estimator.Estimator(model_fn_tf2_ckpt, 'est-tf2',
                             warm_start_from='est-tf1')

def train_fn():  # noqa: F811  (the guide redefines it)
  return tf.data.Dataset.from_tensor_slices(([1,2,3], [4,5,6]))
est.train(train_fn, steps=1)

latest_checkpoint = tf.train.latest_checkpoint('est-tf2')
print_checkpoint(latest_checkpoint)

assert est.get_variable_value('var_list/var/.ATTRIBUTES/VARIABLE_VALUE') == 4

result = {
    "checkpoints": printed,
    "tf2_variable_names": est.get_variable_names(),
    "var_after_warm_start": float(
        est.get_variable_value('var_list/var/.ATTRIBUTES/VARIABLE_VALUE')
    ),
}
print("RESULT " + json.dumps(result, sort_keys=True))
