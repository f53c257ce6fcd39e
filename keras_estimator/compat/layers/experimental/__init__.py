"""`tf.compat.v1.layers.experimental`: Keras-style variable management."""

from keras_estimator._src.v1_layers.keras_style import (
    keras_style_scope,
    set_keras_style,
)

__all__ = ["keras_style_scope", "set_keras_style"]
