"""Stand-ins for TF1 APIs that TensorFlow 2.21 with Keras 3 no longer provides.

`keras_estimator.compat.layers` replaces `tf.compat.v1.layers`;
`keras_estimator.compat.estimator` mirrors `tf.compat.v1.estimator`;
`keras_estimator.compat.keras_estimator` is TensorFlow 2.15's
`tf.keras.estimator`.
"""

from keras_estimator.compat import estimator, keras_estimator, layers

__all__ = ["estimator", "keras_estimator", "layers"]
