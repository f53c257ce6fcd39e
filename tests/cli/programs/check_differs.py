"""tf.estimator 2.15 names that run here with a difference (read by check, never run)."""

import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

x = {"a": [1.0, 2.0]}
input_fn = tf.estimator.inputs.numpy_input_fn(x, shuffle=True)
trees = tf.estimator.BoostedTreesClassifier(feature_columns=[], n_batches_per_layer=1)
kmeans = tf.estimator.experimental.KMeans(num_clusters=3)
tpu = tf.estimator.tpu.TPUEstimator(
    model_fn=None, use_tpu=False, eval_on_tpu=False, export_to_tpu=True
)


def model_fn(features, labels, mode, params):
    optimizer = tf.keras.optimizers.Adam()
    grads = tf.gradients(labels, [])
    return tf.group(
        optimizer.apply_gradients(zip(grads, [])),  # noqa: B905
        tf.assign_add(tf.train.get_global_step(), 1),
    )
