"""Functional TF1 layers: a drop-in for the removed `tf.compat.v1.layers`.

On TensorFlow 2.21 with Keras 3, `tf.compat.v1.layers` only raises "not
available with Keras 3". Old model_fns written for tf.estimator call its
functions (`dense`, `conv2d`, `batch_normalization`, ...), and their
checkpoints are keyed by the TF1 variable names those functions produced
(`dense/kernel`, `dense_1/bias`, `batch_normalization/moving_mean`, ...).

This module owns functional replacements with the same signatures, defaults
and variable names, so such a model_fn ports by replacing `tf.compat.v1.layers`
with `keras_estimator.compat.layers`:

* variables are made with `tf.compat.v1.get_variable` inside a
  `tf.compat.v1.variable_scope` named as TF1 named it: the given `name`, or
  else the layer kind made unique per graph (`dense`, `dense_1`, ...);
  `reuse=True` / `tf.compat.v1.AUTO_REUSE` shares variables as in TF1;
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

These functions build graphs: call them while a model_fn is traced (inside a
`tf.function`, `tf.compat.v1.wrap_function` or a `tf.Graph().as_default()`
block). Called eagerly they raise `RuntimeError`.
"""

# The implementation is split by concept into private modules: `_common`
# (argument normalisation, scopes, variables), `_core` (dense, dropout,
# flatten), `_convolutional`, `_pooling` and `_normalization`.
from keras_estimator.compat.layers._convolutional import conv1d, conv2d
from keras_estimator.compat.layers._core import dense, dropout, flatten
from keras_estimator.compat.layers._normalization import batch_normalization
from keras_estimator.compat.layers._pooling import (
    average_pooling1d,
    average_pooling2d,
    max_pooling1d,
    max_pooling2d,
)

__all__ = [
    "average_pooling1d",
    "average_pooling2d",
    "batch_normalization",
    "conv1d",
    "conv2d",
    "dense",
    "dropout",
    "flatten",
    "max_pooling1d",
    "max_pooling2d",
]
