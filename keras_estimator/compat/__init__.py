"""Stand-ins for TF1 APIs that TensorFlow 2.21 with Keras 3 no longer provides.

`keras_estimator.compat.layers` replaces `tf.compat.v1.layers`.
"""

from keras_estimator.compat import layers

__all__ = ["layers"]
