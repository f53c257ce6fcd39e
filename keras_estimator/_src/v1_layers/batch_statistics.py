"""Batch normalization's computation: layout, variables, statistics, updates.

Shared by the `BatchNormalization` class and its functional form
(`normalization`). TF1 normalized 4D and 5D inputs over their channel axis
with a fused kernel that differs in two ways kept here: the moving variance
is updated with the unbiased batch variance, and `epsilon` is at least
`FUSED_MIN_EPSILON`.
"""

from __future__ import annotations

import numbers
from typing import Any, NamedTuple

import tensorflow as tf

from keras_estimator._src.v1_layers import common

# TF1's fused kernel raised a smaller `epsilon` to this.
FUSED_MIN_EPSILON = 1.001e-5


# ---- shapes and dtypes -------------------------------------------------------
class Layout(NamedTuple):
    """Where the normalized axes of the inputs are, and the parameter shapes."""

    ndims: int
    axes: list[int]
    # Shape of gamma, beta and the moving statistics.
    param_shape: list[int]
    # `param_shape` reshaped to broadcast against the inputs.
    broadcast_shape: list[int]


def _normalized_axes(shape: tf.TensorShape, axis: Any) -> list[int]:
    """`axis` as a list of distinct non-negative axes of `shape`."""
    ndims = shape.rank
    if not ndims:
        raise ValueError(
            "`batch_normalization` needs inputs of known rank of at least 1, "
            f"received inputs with shape {shape}."
        )
    raw_axes = [axis] if isinstance(axis, numbers.Integral) else list(axis)
    axes = [int(a) + ndims if a < 0 else int(a) for a in raw_axes]
    if not axes or any(a < 0 or a >= ndims for a in axes):
        raise ValueError(f"Invalid axis {axis!r} for inputs of rank {ndims}.")
    if len(set(axes)) != len(axes):
        raise ValueError(f"Duplicate axis: {axis!r}.")
    return axes


def layout_of(shape: tf.TensorShape, axis: Any) -> Layout:
    """The layout of inputs of `shape` normalized over `axis`."""
    axes = _normalized_axes(shape, axis)
    ndims = shape.rank
    axis_dims = {a: tf.compat.dimension_value(shape[a]) for a in axes}
    if any(d is None for d in axis_dims.values()):
        raise ValueError(
            "The normalized dimension of the inputs to `batch_normalization` "
            f"should be defined, received shape {shape} and axis={axis!r}."
        )
    if len(axes) == 1:
        param_shape = [axis_dims[axes[0]]]
    else:
        param_shape = [axis_dims.get(i, 1) for i in range(ndims)]
    broadcast_shape = [axis_dims.get(i, 1) for i in range(ndims)]
    return Layout(ndims, axes, param_shape, broadcast_shape)


def parameter_dtype(input_dtype: tf.DType) -> tf.DType:
    """The variables' dtype for inputs of `input_dtype` (float32 for halves)."""
    if input_dtype in (tf.float16, tf.bfloat16) or not input_dtype.is_floating:
        return tf.float32
    return input_dtype


def is_fused_like(fused: bool | None, layout: Layout, param_dtype: tf.DType) -> bool:
    """Whether TF1 would have used its fused kernel for these inputs."""
    ndims, axes = layout.ndims, layout.axes
    return (
        fused is not False
        and len(axes) == 1
        and param_dtype == tf.float32
        and ((ndims == 4 and axes[0] in (1, 3)) or (ndims == 5 and axes[0] in (1, 4)))
    )


def broadcast(value: Any, layout: Layout) -> Any:
    """`value` (a parameter or statistic) reshaped to broadcast, or None."""
    if value is None:
        return None
    return tf.reshape(value, layout.broadcast_shape)


# ---- statistics --------------------------------------------------------------
_Statistics = tuple[tf.Tensor, tf.Tensor, tf.Tensor]


def _batch_statistics(x: tf.Tensor, layout: Layout, fused_like: bool) -> _Statistics:
    """Batch mean, variance, and the variance for the moving-average update.

    Where TF1 used its fused kernel, the update uses the unbiased variance.
    """
    reduction_axes = [i for i in range(layout.ndims) if i not in layout.axes]
    mean, variance = tf.nn.moments(x, reduction_axes, keepdims=True)
    mean = tf.reshape(mean, layout.param_shape)
    variance = tf.reshape(variance, layout.param_shape)
    update_variance = variance
    if fused_like:
        count = tf.cast(
            tf.size(x, tf.int64) // tf.size(variance, tf.int64),
            variance.dtype,
        )
        update_variance = variance * count / tf.maximum(count - 1.0, 1.0)
    return mean, variance, update_variance


def _moving_statistics(moving_mean: Any, moving_variance: Any) -> _Statistics:
    """Moving mean and variance (the variance again for the update)."""
    mean = tf.convert_to_tensor(moving_mean)
    variance = tf.convert_to_tensor(moving_variance)
    return mean, variance, variance


def statistics(
    x: tf.Tensor,
    training: Any,
    momentum: Any,
    layout: Layout,
    fused_like: bool,
    moving_mean: tf.Variable,
    moving_variance: tf.Variable,
) -> tuple[tf.Tensor, tf.Tensor, list[tf.Operation]]:
    """The mean and variance that normalize `x`, and the update ops.

    Unless `training` is known to be false, the update ops move the moving
    statistics toward the batch ones; otherwise there are none.
    """
    training_value = common.static_bool(training)
    if training_value is False:
        mean, variance, _ = _moving_statistics(moving_mean, moving_variance)
        return mean, variance, []
    mean, variance, update_variance = common.smart_cond(
        training,
        lambda: _batch_statistics(x, layout, fused_like),
        lambda: _moving_statistics(moving_mean, moving_variance),
    )
    if training_value is None:
        # The updates leave the moving statistics unchanged when not training.
        update_momentum = common.smart_cond(
            training,
            lambda: tf.convert_to_tensor(momentum, x.dtype),
            lambda: tf.constant(1.0, x.dtype),
        )
    else:
        update_momentum = momentum
    updates = [
        _assign_moving_average(variable, value, update_momentum)
        for variable, value in (
            (moving_mean, mean),
            (moving_variance, update_variance),
        )
    ]
    return mean, variance, updates


def _assign_moving_average(
    variable: tf.Variable, value: tf.Tensor, momentum: Any
) -> tf.Operation:
    """`variable -= (variable - value) * (1 - momentum)`, as an op."""
    with tf.name_scope("AssignMovingAvg"):
        if isinstance(momentum, (int, float)):
            # As TF1: 1 - momentum in Python, then one rounding to the
            # variable's dtype (float32 1 - float32(0.999) is 0.00099998713).
            decay = tf.constant(1.0 - momentum, variable.dtype)
        else:
            decay = tf.cast(1.0 - tf.convert_to_tensor(momentum), variable.dtype)
        delta = (variable - tf.cast(value, variable.dtype)) * decay
        return variable.assign_sub(delta, read_value=False)
