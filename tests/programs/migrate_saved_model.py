"""The TF1 cells of TensorFlow's "Migrate the SavedModel workflow" guide.

site/en/guide/migrate/saved_model.ipynb (tensorflow/docs): `add_two` saved
three TF1 ways, with `tf1.saved_model.Builder`, with
`tf1.saved_model.simple_save`, and as an Estimator whose model_fn returns a
`PredictOutput` export output, trained one step and exported with
`build_raw_serving_input_receiver_fn`; then each is loaded with the guide's
TF1 `load_tf1` (`tf1.saved_model.load` into a session) and TF2 `load_tf2`
(`tf.saved_model.load` and its serving signature).

Changes from the guide: the TF2 saving cells (`tf.Module`, Keras) and
their loads are left out, and so are the `!saved_model_cli run` shell cells
(the loads run the same signatures); the guide's relative directories are
made in a temporary working directory. The RESULT line records what the
loads printed and what the export wrote.
"""

import json
import os
import shutil
import tempfile

import tensorflow as tf
import tensorflow.compat.v1 as tf1

os.chdir(tempfile.mkdtemp())
outputs = {}

def remove_dir(path):
  try:
    shutil.rmtree(path)
  except:  # noqa: E722  (the guide's)
    pass

def add_two(input):
  return input + 2

remove_dir("saved-model-builder")

with tf.Graph().as_default() as g:
  with tf1.Session() as sess:
    input = tf1.placeholder(tf.float32, shape=[])
    output = add_two(input)
    print("add two output: ", sess.run(output, {input: 3.}))

    # Save with SavedModelBuilder
    builder = tf1.saved_model.Builder('saved-model-builder')
    sig_def = tf1.saved_model.predict_signature_def(
        inputs={'input': input},
        outputs={'output': output})
    builder.add_meta_graph_and_variables(
        sess, tags=["serve"], signature_def_map={
            tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY: sig_def
    })
    builder.save()

remove_dir("simple-save")

with tf.Graph().as_default() as g:
  with tf1.Session() as sess:
    input = tf1.placeholder(tf.float32, shape=[])
    output = add_two(input)
    print("add_two output: ", sess.run(output, {input: 3.}))

    tf1.saved_model.simple_save(
        sess, 'simple-save',
        inputs={'input': input},
        outputs={'output': output})

def model_fn(features, labels, mode):
  output = add_two(features['input'])
  step = tf1.train.get_global_step()
  return tf.estimator.EstimatorSpec(
      mode,
      predictions=output,
      train_op=step.assign_add(1),
      loss=tf.constant(0.),
      export_outputs={
          tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY: \
          tf.estimator.export.PredictOutput({'output': output})})
est = tf.estimator.Estimator(model_fn, 'estimator-checkpoints')

# Train for one step to create a checkpoint.
def train_fn():
  return tf.data.Dataset.from_tensors({'input': 3.})
est.train(train_fn, steps=1)

# This utility function `build_raw_serving_input_receiver_fn` takes in raw
# tensor features and builds an "input serving receiver function", which
# creates placeholder inputs to the model.
serving_input_fn = tf.estimator.export.build_raw_serving_input_receiver_fn(
    {'input': tf.constant(3.)})  # Pass in a dummy input batch.
estimator_path = est.export_saved_model('exported-estimator', serving_input_fn)

# Estimator's export_saved_model creates a time stamped directory. Move this
# to a set path so it can be inspected with `saved_model_cli` in the cell below.
remove_dir('estimator-model')
import shutil  # noqa: E402,F811  (the guide's)

shutil.move(estimator_path, 'estimator-model')

def load_tf1(path, input):
  print('Loading from', path)
  with tf.Graph().as_default() as g:  # noqa: F841  (the guide's)
    with tf1.Session() as sess:
      meta_graph = tf1.saved_model.load(sess, ["serve"], path)
      sig_def = meta_graph.signature_def[tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
      input_name = sig_def.inputs['input'].name
      output_name = sig_def.outputs['output'].name
      print('  Output with input', input, ': ',
            sess.run(output_name, feed_dict={input_name: input}))
      outputs["tf1 " + path] = sess.run(output_name, feed_dict={input_name: input}).tolist()
      outputs["tf1 signature " + path] = [
          sorted(sig_def.inputs), sorted(sig_def.outputs), sig_def.method_name
      ]

load_tf1('saved-model-builder', 5.)
load_tf1('simple-save', 5.)
load_tf1('estimator-model', [5.])  # Estimator's input must be batched.

def load_tf2(path, input):
  print('Loading from', path)
  loaded = tf.saved_model.load(path)
  out = loaded.signatures[tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY](
      tf.constant(input))['output']
  print('  Output with input', input, ': ', out)
  outputs["tf2 " + path] = out.numpy().tolist()

load_tf2('saved-model-builder', 5.)
load_tf2('simple-save', 5.)
load_tf2('estimator-model', [5.])  # Estimator's input must be batched.

result = {
    "outputs": outputs,
    "global_step": int(est.get_variable_value("global_step")),
    "export_path_type": type(estimator_path).__name__,
    "exported_parent": os.path.basename(os.path.dirname(os.fsdecode(estimator_path))),
    "export_is_timestamped": os.path.basename(os.fsdecode(estimator_path)).isdigit(),
    # TensorFlow 2.21's own Builder and simple_save also write fingerprint.pb.
    "builder_files": sorted(os.listdir("saved-model-builder")),
    "estimator_model_files": sorted(os.listdir("estimator-model")),
    "estimator_model_variables": sorted(os.listdir("estimator-model/variables")),
    "checkpoint_dir_has_latest": os.path.basename(
        tf1.train.latest_checkpoint("estimator-checkpoints")
    ),
}
print("RESULT " + json.dumps(result, sort_keys=True))
