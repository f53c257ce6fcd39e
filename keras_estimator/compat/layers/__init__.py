"""Functional TF1 layers: a drop-in for the removed `tf.compat.v1.layers`.

On TensorFlow 2.21 with Keras 3, `tf.compat.v1.layers` only raises "not
available with Keras 3". Old model_fns written for tf.estimator call its
functions (`dense`, `conv2d`, `batch_normalization`, ...), and their
checkpoints are keyed by the TF1 variable names those functions produced
(`dense/kernel`, `dense_1/bias`, `batch_normalization/moving_mean`, ...).

This module owns replacements for its functions and its layer classes
(`Dense`, `Conv2D`, `BatchNormalization`, ..., and the `Layer` base class to
subclass), with the same signatures, defaults and variable names, so such a
model_fn ports by replacing `tf.compat.v1.layers` with
`keras_estimator.compat.layers` (`keras_estimator.install()` does it for
`tf.compat.v1.layers` itself):

* variables are made with `tf.compat.v1.get_variable` inside a
  `tf.compat.v1.variable_scope` named as TF1 named it: the given `name`, or
  else the layer kind made unique per graph (`dense`, `dense_1`, ...);
  `reuse=True` / `tf.compat.v1.AUTO_REUSE` shares variables as in TF1;
* a layer object creates its variables at its first call and reuses them on
  later calls; it lists them (`weights`, `trainable_weights`, `kernel`, ...)
  with its `losses` and `updates`;
* a weight regularization loss goes to
  `tf.compat.v1.GraphKeys.REGULARIZATION_LOSSES` when its variable is
  created in (or first brought into) the graph, not when it is reused; an
  activity regularization loss (divided by the batch size, as TF1 did) on
  every call;
* `batch_normalization` in training adds its moving-average updates to
  `tf.compat.v1.GraphKeys.UPDATE_OPS`, which TF1 code runs with
  `tf.control_dependencies(tf.compat.v1.get_collection(UPDATE_OPS))`.

The computation uses plain TensorFlow ops. `channels_first` inputs are
transposed to channels-last around convolutions and pooling (the CPU kernels
only take channels-last); Grappler's layout optimizer removes the transposes
where a GPU kernel prefers channels-first.

The functions and layer calls build graphs: call them while a model_fn is
traced (inside a `tf.function`, `tf.compat.v1.wrap_function` or a
`tf.Graph().as_default()` block); called eagerly they raise `RuntimeError`.
Layer objects may be constructed anywhere.
"""

# The implementation is split by concept into private modules: `_common`
# (argument normalisation, scopes, variables), `_base` (the `Layer` class and
# its variable-scope rules), `_input_spec`, `_keras_style`, and one module per
# layer family, classes apart from functional forms where both are long.
from keras_estimator._src.v1_layers.base import Layer
from keras_estimator._src.v1_layers.conv_functions import conv1d, conv2d, conv3d
from keras_estimator._src.v1_layers.conv_transpose import (
    Conv2DTranspose,
    Conv3DTranspose,
    conv2d_transpose,
    conv3d_transpose,
)
from keras_estimator._src.v1_layers.convolutional import Conv1D, Conv2D, Conv3D
from keras_estimator._src.v1_layers.core import Dropout, Flatten, dropout, flatten
from keras_estimator._src.v1_layers.dense import Dense, dense
from keras_estimator._src.v1_layers.input_spec import InputSpec
from keras_estimator._src.v1_layers.normalization import (
    BatchNormalization,
    batch_normalization,
)
from keras_estimator._src.v1_layers.pooling import (
    AveragePooling1D,
    AveragePooling2D,
    AveragePooling3D,
    MaxPooling1D,
    MaxPooling2D,
    MaxPooling3D,
)
from keras_estimator._src.v1_layers.pooling_functions import (
    average_pooling1d,
    average_pooling2d,
    average_pooling3d,
    max_pooling1d,
    max_pooling2d,
    max_pooling3d,
)
from keras_estimator._src.v1_layers.separable import SeparableConv1D, SeparableConv2D
from keras_estimator._src.v1_layers.separable_functions import (
    separable_conv1d,
    separable_conv2d,
)
from keras_estimator.compat.layers import experimental

__all__ = [
    "AveragePooling1D",
    "AveragePooling2D",
    "AveragePooling3D",
    "BatchNormalization",
    "Conv1D",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "Dense",
    "Dropout",
    "Flatten",
    "InputSpec",
    "Layer",
    "MaxPooling1D",
    "MaxPooling2D",
    "MaxPooling3D",
    "SeparableConv1D",
    "SeparableConv2D",
    "average_pooling1d",
    "average_pooling2d",
    "average_pooling3d",
    "batch_normalization",
    "conv1d",
    "conv2d",
    "conv2d_transpose",
    "conv3d",
    "conv3d_transpose",
    "dense",
    "dropout",
    "experimental",
    "flatten",
    "max_pooling1d",
    "max_pooling2d",
    "max_pooling3d",
    "separable_conv1d",
    "separable_conv2d",
]
