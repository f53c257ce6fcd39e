"""Batch normalization: `batch_normalization`, as TF1's functional layer."""

from __future__ import annotations

import numbers
from typing import Any, NamedTuple

import tensorflow as tf

from keras_estimator.compat.layers import _common

# TF1's fused kernel raised a smaller `epsilon` to this.
_FUSED_MIN_EPSILON = 1.001e-5


def batch_normalization(
    inputs: Any,
    axis: Any = -1,
    momentum: Any = 0.99,
    epsilon: float = 1e-3,
    center: bool = True,
    scale: bool = True,
    beta_initializer: Any = _common.ZEROS,
    gamma_initializer: Any = _common.ONES,
    moving_mean_initializer: Any = _common.ZEROS,
    moving_variance_initializer: Any = _common.ONES,
    beta_regularizer: Any = None,
    gamma_regularizer: Any = None,
    beta_constraint: Any = None,
    gamma_constraint: Any = None,
    training: Any = False,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
    renorm: bool = False,
    renorm_clipping: Any = None,
    renorm_momentum: float = 0.99,
    fused: bool | None = None,
    virtual_batch_size: int | None = None,
    adjustment: Any = None,
) -> tf.Tensor:
    """Batch normalization layer (Ioffe and Szegedy, 2015), TF1 style.

    Creates, in `<scope>` (`batch_normalization`, `batch_normalization_1`,
    ... or `name`), the trainable `gamma` (if `scale`) and `beta` (if
    `center`) and the non-trainable `moving_mean` and `moving_variance`.

    In training the inputs are normalized with the batch mean and variance,
    and two ops that move the moving statistics toward them
    (`moving -= (moving - batch) * (1 - momentum)`) are added to
    `tf.compat.v1.GraphKeys.UPDATE_OPS`; run them with the train op, e.g.::

        update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            train_op = optimizer.minimize(loss)

    Otherwise the moving statistics are used and nothing is added. As in TF1,
    4D (and 5D) inputs normalized over axis 1 or the last axis (where TF1 used
    its fused kernel) update `moving_variance` with the unbiased batch
    variance, and their `epsilon` is at least 1.001e-5.

    Args:
        inputs: Input tensor of known rank.
        axis: Int or list of ints, the feature axis or axes (usually the
            channels: -1 for channels-last, 1 for channels-first).
        momentum: Momentum of the moving averages.
        epsilon: Small float added to the variance.
        center: Whether to add the learned offset `beta`.
        scale: Whether to multiply by the learned `gamma`.
        beta_initializer: Initializer for `beta`.
        gamma_initializer: Initializer for `gamma`.
        moving_mean_initializer: Initializer for `moving_mean`.
        moving_variance_initializer: Initializer for `moving_variance`.
        beta_regularizer: Regularizer callable for `beta`.
        gamma_regularizer: Regularizer callable for `gamma`.
        beta_constraint: Projection applied to `beta` after updates.
        gamma_constraint: Projection applied to `gamma` after updates.
        training: Python bool or scalar bool tensor: whether to use the batch
            statistics and update the moving ones (a tensor selects at run
            time; the update ops then leave the moving statistics unchanged
            when it is false).
        trainable: Whether `gamma` and `beta` are trainable.
        name: Variable scope name of the layer.
        reuse: True or `tf.compat.v1.AUTO_REUSE` to reuse a named layer.
        renorm: Batch renormalization; not supported, must be False.
        renorm_clipping: Only used with `renorm`.
        renorm_momentum: Only used with `renorm`.
        fused: False selects TF1's non-fused kernel, whose moving variance
            update uses the biased batch variance; None or True use the fused
            behaviour where TF1 could.
        virtual_batch_size: Ghost batch normalization; not supported, must be
            None.
        adjustment: Training-time adjustment; not supported, must be None.

    Returns:
        Tensor with the shape and dtype of `inputs`.

    Raises:
        ValueError: if the rank or the normalized dimensions of `inputs` are
            unknown, or `axis` is invalid.
        NotImplementedError: for `renorm`, `virtual_batch_size` or
            `adjustment`.
        RuntimeError: if called eagerly.
    """
    del renorm_clipping, renorm_momentum  # Only meaningful with renorm.
    _common.require_graph("batch_normalization")
    if renorm or virtual_batch_size is not None or adjustment is not None:
        raise NotImplementedError(
            "keras_estimator.compat.layers.batch_normalization does not support "
            "`renorm`, `virtual_batch_size` or `adjustment`."
        )
    with _common.layer_scope(name, "batch_normalization", reuse):
        x = tf.convert_to_tensor(inputs)
        layout = _layout(x.shape, axis)
        x, param_dtype = _with_parameter_dtype(x)
        fused_like = _is_fused_like(fused, layout, param_dtype)
        if fused_like:
            epsilon = max(epsilon, _FUSED_MIN_EPSILON)
        variables = _create_variables(
            layout.param_shape,
            param_dtype,
            center,
            scale,
            beta_initializer,
            gamma_initializer,
            moving_mean_initializer,
            moving_variance_initializer,
            beta_regularizer,
            gamma_regularizer,
            beta_constraint,
            gamma_constraint,
            trainable,
        )
        compute_x = tf.cast(x, param_dtype)
        mean, variance = _statistics(
            compute_x, training, momentum, layout, fused_like, variables
        )
        outputs = tf.nn.batch_normalization(
            compute_x,
            _broadcast(mean, layout),
            _broadcast(variance, layout),
            offset=_broadcast(variables.beta, layout),
            scale=_broadcast(variables.gamma, layout),
            variance_epsilon=epsilon,
        )
        return tf.cast(outputs, x.dtype)


# ---- shapes and dtypes -------------------------------------------------------
class _Layout(NamedTuple):
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


def _layout(shape: tf.TensorShape, axis: Any) -> _Layout:
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
    return _Layout(ndims, axes, param_shape, broadcast_shape)


def _with_parameter_dtype(x: tf.Tensor) -> tuple[tf.Tensor, tf.DType]:
    """`x` (cast to float32 unless floating) and the dtype of the variables."""
    if x.dtype in (tf.float16, tf.bfloat16):
        return x, tf.float32
    if x.dtype.is_floating:
        return x, x.dtype
    return tf.cast(x, tf.float32), tf.float32


def _is_fused_like(fused: bool | None, layout: _Layout, param_dtype: tf.DType) -> bool:
    """Whether TF1 would have used its fused kernel for these inputs."""
    ndims, axes = layout.ndims, layout.axes
    return (
        fused is not False
        and len(axes) == 1
        and param_dtype == tf.float32
        and ((ndims == 4 and axes[0] in (1, 3)) or (ndims == 5 and axes[0] in (1, 4)))
    )


def _broadcast(value: Any, layout: _Layout) -> Any:
    """`value` (a parameter or statistic) reshaped to broadcast, or None."""
    if value is None:
        return None
    return tf.reshape(value, layout.broadcast_shape)


# ---- variables ---------------------------------------------------------------
class _Variables(NamedTuple):
    """The variables of a batch normalization layer."""

    gamma: tf.Variable | None
    beta: tf.Variable | None
    moving_mean: tf.Variable
    moving_variance: tf.Variable


def _create_variables(
    shape: list[int],
    dtype: tf.DType,
    center: bool,
    scale: bool,
    beta_initializer: Any,
    gamma_initializer: Any,
    moving_mean_initializer: Any,
    moving_variance_initializer: Any,
    beta_regularizer: Any,
    gamma_regularizer: Any,
    beta_constraint: Any,
    gamma_constraint: Any,
    trainable: bool,
) -> _Variables:
    """Gets or creates `gamma`, `beta`, `moving_mean` and `moving_variance`."""
    gamma = beta = None
    if scale:
        gamma = _common.add_variable(
            "gamma",
            shape,
            dtype,
            gamma_initializer,
            gamma_regularizer,
            gamma_constraint,
            trainable,
        )
    if center:
        beta = _common.add_variable(
            "beta",
            shape,
            dtype,
            beta_initializer,
            beta_regularizer,
            beta_constraint,
            trainable,
        )
    moving_mean = _moving_variable("moving_mean", shape, dtype, moving_mean_initializer)
    moving_variance = _moving_variable(
        "moving_variance", shape, dtype, moving_variance_initializer
    )
    return _Variables(gamma, beta, moving_mean, moving_variance)


def _moving_variable(
    name: str, shape: list[int], dtype: tf.DType, initializer: Any
) -> tf.Variable:
    """A non-trainable moving statistic, averaged across replicas on read."""
    return _common.add_variable(
        name,
        shape,
        dtype,
        initializer,
        trainable=False,
        synchronization=tf.VariableSynchronization.ON_READ,
        aggregation=tf.VariableAggregation.MEAN,
    )


# ---- statistics --------------------------------------------------------------
_Statistics = tuple[tf.Tensor, tf.Tensor, tf.Tensor]


def _batch_statistics(x: tf.Tensor, layout: _Layout, fused_like: bool) -> _Statistics:
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


def _moving_statistics(variables: _Variables) -> _Statistics:
    """Moving mean and variance (the variance again for the update)."""
    mean = tf.convert_to_tensor(variables.moving_mean)
    variance = tf.convert_to_tensor(variables.moving_variance)
    return mean, variance, variance


def _statistics(
    x: tf.Tensor,
    training: Any,
    momentum: Any,
    layout: _Layout,
    fused_like: bool,
    variables: _Variables,
) -> tuple[tf.Tensor, tf.Tensor]:
    """The mean and variance that normalize `x`.

    Unless `training` is known to be false, also adds the moving-average
    updates of the moving statistics to `GraphKeys.UPDATE_OPS`.
    """
    training_value = _common.static_bool(training)
    if training_value is False:
        mean, variance, _ = _moving_statistics(variables)
        return mean, variance
    mean, variance, update_variance = _common.smart_cond(
        training,
        lambda: _batch_statistics(x, layout, fused_like),
        lambda: _moving_statistics(variables),
    )
    if training_value is None:
        # The updates leave the moving statistics unchanged when not training.
        update_momentum = _common.smart_cond(
            training,
            lambda: tf.convert_to_tensor(momentum, x.dtype),
            lambda: tf.constant(1.0, x.dtype),
        )
    else:
        update_momentum = momentum
    for variable, value in (
        (variables.moving_mean, mean),
        (variables.moving_variance, update_variance),
    ):
        tf.compat.v1.add_to_collection(
            _common.GraphKeys.UPDATE_OPS,
            _assign_moving_average(variable, value, update_momentum),
        )
    return mean, variance


def _assign_moving_average(
    variable: tf.Variable, value: tf.Tensor, momentum: Any
) -> tf.Operation:
    """`variable -= (variable - value) * (1 - momentum)`, as an op."""
    with tf.name_scope("AssignMovingAvg"):
        decay = tf.cast(1.0 - tf.convert_to_tensor(momentum), variable.dtype)
        delta = (variable - tf.cast(value, variable.dtype)) * decay
        return variable.assign_sub(delta, read_value=False)
