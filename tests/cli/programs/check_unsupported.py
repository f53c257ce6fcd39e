"""tf.estimator-era code that does not run here (read by check, never run)."""

import tensorflow as tf
import tensorflow_estimator as tfe
from tensorflow.contrib import slim  # noqa: F401
from tensorflow_estimator.python.estimator import estimator as estimator_lib  # noqa: F401


class SessionHook(tf.estimator.SessionRunHook):
    def after_run(self, run_context, run_values):
        return run_context.session.run("loss:0")


classifier = tf.estimator.DNNClasifier(hidden_units=[4], feature_columns=[])
layer = tf.contrib.layers.fully_connected
tpu = tf.compat.v1.estimator.tpu.TPUEstimator(
    model_fn=None, embedding_config_spec=object()
)
with tf.compat.v1.Session() as session:
    session.run(tfe.estimator.Estimator)
