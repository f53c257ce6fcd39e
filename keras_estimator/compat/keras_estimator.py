"""`tf.keras.estimator` of TensorFlow 2.15: `model_to_estimator`.

Keras tutorials of the tf.estimator era reached the Keras-to-Estimator
conversion as `tf.keras.estimator.model_to_estimator`. Keras 3 has no such
namespace; `keras_estimator.install()` makes `tf.keras.estimator` this module.
"""

from keras_estimator._src.base import public_names as _public_names
from keras_estimator._src.keras_interop.model_to_estimator import (
    model_to_estimator as model_to_estimator,
)

__all__ = _public_names.names_in(__name__)
