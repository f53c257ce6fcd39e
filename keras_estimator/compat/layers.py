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

from __future__ import annotations

import functools
import numbers
import operator
from collections.abc import Callable, Sequence
from typing import Any

import keras
import numpy as np
import tensorflow as tf

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

_GraphKeys = tf.compat.v1.GraphKeys
# Names of the variables this module has handed out in the current function
# trace (a per-trace collection; strings, so a MetaGraph can hold them).
_SEEN_IN_TRACE_COLLECTION = "keras_estimator_compat_layers_variables"
_FUSED_MIN_EPSILON = 1.001e-5
_ZEROS = tf.compat.v1.zeros_initializer()
_ONES = tf.compat.v1.ones_initializer()


# ---- shared helpers ----------------------------------------------------------
def _require_graph(function_name: str) -> None:
    if tf.executing_eagerly():
        raise RuntimeError(
            f"keras_estimator.compat.layers.{function_name} was called eagerly. "
            "Like tf.compat.v1.layers it creates TF1 variables with "
            "tf.compat.v1.get_variable and must be called while a graph is "
            "built: inside a model_fn, a tf.function, or a "
            "`with tf.Graph().as_default():` block."
        )


def _layer_scope(name: str | None, kind: str, reuse: Any) -> Any:
    """The variable scope TF1's `tf.compat.v1.layers` opened for a layer.

    A given `name` is used as is (a second layer with the same name and no
    `reuse` fails in `get_variable`, as in TF1). Without a name, the layer
    kind is made unique per graph (`dense`, `dense_1`, ...), except with
    `reuse`, which reuses the variables of the first unnamed layer (`dense`).
    """
    reuse = reuse or None
    if name:
        return tf.compat.v1.variable_scope(name, reuse=reuse)
    if reuse:
        return tf.compat.v1.variable_scope(kind, reuse=reuse)
    return tf.compat.v1.variable_scope(None, default_name=kind)


def _as_float_tensor(inputs: Any) -> tf.Tensor:
    tensor = tf.convert_to_tensor(inputs)
    if not tensor.dtype.is_floating:
        tensor = tf.cast(tensor, tf.float32)
    return tensor


def _keras_object(getter: Callable[[Any], Any], value: Any) -> Any:
    """Resolves a string or config dict (e.g. "relu") like TF1's Keras layers."""
    if isinstance(value, (str, dict)):
        return getter(value)
    return value


def _int_tuple(value: Any, n: int, argument: str) -> tuple[int, ...]:
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),) * n
    try:
        result = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        result = ()
    if len(result) != n:
        raise ValueError(
            f"`{argument}` must be an int or a tuple of {n} ints, "
            f"received {argument}={value!r}."
        )
    return result


def _check_padding(padding: Any, allowed: Sequence[str] = ("valid", "same")) -> str:
    normalized = padding.lower() if isinstance(padding, str) else ""
    if normalized not in allowed:
        choices = " or ".join(repr(p) for p in allowed)
        raise ValueError(
            f"`padding` must be one of {choices} (case-insensitive), "
            f"received padding={padding!r}."
        )
    return normalized


def _is_channels_first(data_format: Any) -> bool:
    if data_format is None:
        return False
    normalized = data_format.lower() if isinstance(data_format, str) else None
    if normalized not in ("channels_last", "channels_first"):
        raise ValueError(
            "`data_format` must be 'channels_last' or 'channels_first', "
            f"received data_format={data_format!r}."
        )
    return normalized == "channels_first"


def _to_channels_last(x: tf.Tensor) -> tf.Tensor:
    rank = x.shape.rank
    return tf.transpose(x, [0, *range(2, rank), 1])


def _to_channels_first(x: tf.Tensor) -> tf.Tensor:
    rank = x.shape.rank
    return tf.transpose(x, [0, rank - 1, *range(1, rank - 1)])


def _check_rank(x: tf.Tensor, rank: int, function_name: str) -> None:
    if x.shape.rank != rank:
        raise ValueError(
            f"`{function_name}` expects inputs of rank {rank}, received inputs "
            f"with shape {x.shape}."
        )


def _static_bool(value: Any) -> bool | None:
    """`value` as a Python bool when known while building, else None."""
    if value is None:
        return False
    if isinstance(value, (bool, np.bool_, numbers.Integral)):
        return bool(value)
    static = tf.get_static_value(tf.convert_to_tensor(value))
    return None if static is None else bool(static)


def _smart_cond(
    pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any]
) -> Any:
    """`true_fn()` or `false_fn()` when `pred` is known, else a `tf.cond`."""
    static = _static_bool(pred)
    if static is not None:
        return true_fn() if static else false_fn()
    return tf.cond(tf.cast(pred, tf.bool), true_fn, false_fn)


def _add_variable(
    name: str,
    shape: Sequence[int],
    dtype: tf.DType,
    initializer: Any,
    regularizer: Any = None,
    constraint: Any = None,
    trainable: bool = True,
    **kwargs: Any,
) -> tf.Variable:
    """Gets or creates `name` in the current variable scope, as TF1 layers did."""
    regularizer = _keras_object(keras.regularizers.get, regularizer)
    graph = tf.compat.v1.get_default_graph()
    existing: set[int] = set()
    if regularizer is not None and not graph.building_function:
        existing = {id(v) for v in tf.compat.v1.global_variables()}
    variable = tf.compat.v1.get_variable(
        name,
        shape=list(shape),
        dtype=dtype,
        initializer=_keras_object(keras.initializers.get, initializer),
        trainable=trainable,
        constraint=_keras_object(keras.constraints.get, constraint),
        **kwargs,
    )
    # As in TF1, a variable adds its regularization loss when it is created,
    # not when it is reused. A TF2 trace shares GLOBAL_VARIABLES with the
    # outer graph (so variables from an earlier trace are already there) but
    # has its own copy of other collections: there, "created" means first
    # obtained through this module in this trace.
    if graph.building_function:
        seen = tf.compat.v1.get_collection_ref(_SEEN_IN_TRACE_COLLECTION)
        is_new = variable.name not in seen
        if is_new:
            seen.append(variable.name)
    else:
        is_new = id(variable) not in existing
    if regularizer is not None and is_new:
        with tf.name_scope(f"{name}/Regularizer"):
            loss = regularizer(variable)
        if loss is not None:
            tf.compat.v1.add_to_collection(_GraphKeys.REGULARIZATION_LOSSES, loss)
    return variable


def _finish(
    outputs: tf.Tensor, activation: Any, activity_regularizer: Any
) -> tf.Tensor:
    """Applies the activation, then records the activity regularization loss."""
    activation = _keras_object(keras.activations.get, activation)
    if activation is not None:
        outputs = activation(outputs)
    activity_regularizer = _keras_object(keras.regularizers.get, activity_regularizer)
    if activity_regularizer is not None:
        with tf.name_scope("ActivityRegularizer"):
            loss = tf.convert_to_tensor(activity_regularizer(outputs))
            batch_size = tf.cast(tf.shape(outputs)[0], loss.dtype)
            tf.compat.v1.add_to_collection(
                _GraphKeys.REGULARIZATION_LOSSES, loss / batch_size
            )
    return outputs


# ---- dense -------------------------------------------------------------------
def dense(
    inputs: Any,
    units: int,
    activation: Any = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = _ZEROS,
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    kernel_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> tf.Tensor:
    """Densely-connected layer: `activation(inputs @ kernel + bias)`.

    Creates `<scope>/kernel` of shape `[inputs.shape[-1], units]` and, with
    `use_bias`, `<scope>/bias` of shape `[units]`, where `<scope>` is `dense`,
    `dense_1`, ... or `name`. Inputs of rank above 2 are contracted on their
    last axis; a rank-2 `tf.SparseTensor` is multiplied sparsely.

    Args:
        inputs: Tensor input (float; other dtypes are cast to float32).
        units: Positive integer, dimensionality of the output space.
        activation: Activation callable (or Keras name such as "relu"); None
            keeps the linear output.
        use_bias: Whether to add a bias.
        kernel_initializer: Initializer for the kernel; None means Glorot
            uniform, as `tf.compat.v1.get_variable` does.
        bias_initializer: Initializer for the bias (zeros).
        kernel_regularizer: Callable taking the kernel and returning a scalar
            loss, added to `GraphKeys.REGULARIZATION_LOSSES`.
        bias_regularizer: Same, for the bias.
        activity_regularizer: Callable taking the output; its value divided by
            the batch size is added to `GraphKeys.REGULARIZATION_LOSSES`.
        kernel_constraint: Projection applied to the kernel by v1 optimizers
            after each update.
        bias_constraint: Same, for the bias.
        trainable: Whether the variables go to `GraphKeys.TRAINABLE_VARIABLES`.
        name: Variable scope name of the layer.
        reuse: True or `tf.compat.v1.AUTO_REUSE` to reuse the variables of a
            previous layer with the same name.

    Returns:
        Output tensor with the shape of `inputs` except the last dimension,
        which is `units`.

    Raises:
        ValueError: if the last dimension of `inputs` is unknown or `units` is
            not positive.
        RuntimeError: if called eagerly.
    """
    _require_graph("dense")
    units = int(units)
    if units <= 0:
        raise ValueError(f"`units` must be a positive integer, received units={units}.")
    with _layer_scope(name, "dense", reuse):
        sparse = isinstance(inputs, tf.SparseTensor)
        if sparse:
            x = inputs if inputs.dtype.is_floating else tf.cast(inputs, tf.float32)
        else:
            x = _as_float_tensor(inputs)
        rank = x.shape.rank
        in_dim = tf.compat.dimension_value(x.shape[-1]) if rank else None
        if in_dim is None:
            raise ValueError(
                "The last dimension of the inputs to `dense` should be defined, "
                f"received inputs with shape {x.shape}."
            )
        kernel = _add_variable(
            "kernel",
            [in_dim, units],
            x.dtype,
            kernel_initializer,
            kernel_regularizer,
            kernel_constraint,
            trainable,
        )
        bias = None
        if use_bias:
            bias = _add_variable(
                "bias",
                [units],
                x.dtype,
                bias_initializer,
                bias_regularizer,
                bias_constraint,
                trainable,
            )
        if sparse:
            outputs = tf.sparse.sparse_dense_matmul(x, kernel)
        elif rank == 2:
            outputs = tf.matmul(x, kernel)
        else:
            outputs = tf.tensordot(x, kernel, [[rank - 1], [0]])
            outputs.set_shape(x.shape[:-1].concatenate([units]))
        if bias is not None:
            outputs = tf.nn.bias_add(outputs, bias)
        return _finish(outputs, activation, activity_regularizer)


# ---- convolutions ------------------------------------------------------------
def _conv(
    rank: int,
    kind: str,
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any,
    padding: Any,
    data_format: Any,
    dilation_rate: Any,
    activation: Any,
    use_bias: bool,
    kernel_initializer: Any,
    bias_initializer: Any,
    kernel_regularizer: Any,
    bias_regularizer: Any,
    activity_regularizer: Any,
    kernel_constraint: Any,
    bias_constraint: Any,
    trainable: bool,
    name: str | None,
    reuse: Any,
) -> tf.Tensor:
    _require_graph(kind)
    filters = int(filters)
    if filters <= 0:
        raise ValueError(
            f"`filters` must be a positive integer, received filters={filters}."
        )
    kernel_size = _int_tuple(kernel_size, rank, "kernel_size")
    strides = _int_tuple(strides, rank, "strides")
    dilations = _int_tuple(dilation_rate, rank, "dilation_rate")
    padding = _check_padding(
        padding, ("valid", "same", "causal") if rank == 1 else ("valid", "same")
    )
    channels_first = _is_channels_first(data_format)
    if max(strides) > 1 and max(dilations) > 1:
        raise ValueError(
            "`strides` > 1 is not supported together with `dilation_rate` > 1, "
            f"received strides={strides} and dilation_rate={dilations}."
        )
    with _layer_scope(name, kind, reuse):
        x = _as_float_tensor(inputs)
        _check_rank(x, rank + 2, kind)
        if channels_first:
            x = _to_channels_last(x)
        in_channels = tf.compat.dimension_value(x.shape[-1])
        if in_channels is None:
            raise ValueError(
                f"The channel dimension of the inputs to `{kind}` should be "
                f"defined, received inputs with shape {inputs.shape}."
            )
        kernel = _add_variable(
            "kernel",
            [*kernel_size, in_channels, filters],
            x.dtype,
            kernel_initializer,
            kernel_regularizer,
            kernel_constraint,
            trainable,
        )
        bias = None
        if use_bias:
            bias = _add_variable(
                "bias",
                [filters],
                x.dtype,
                bias_initializer,
                bias_regularizer,
                bias_constraint,
                trainable,
            )
        if padding == "causal":
            left = dilations[0] * (kernel_size[0] - 1)
            x = tf.pad(x, [[0, 0], [left, 0], [0, 0]])
            padding = "valid"
        outputs = tf.nn.convolution(
            x,
            kernel,
            strides=list(strides),
            padding=padding.upper(),
            dilations=list(dilations),
        )
        if bias is not None:
            outputs = tf.nn.bias_add(outputs, bias)
        if channels_first:
            outputs = _to_channels_first(outputs)
        return _finish(outputs, activation, activity_regularizer)


def conv1d(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = 1,
    padding: str = "valid",
    data_format: str = "channels_last",
    dilation_rate: Any = 1,
    activation: Any = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = _ZEROS,
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    kernel_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> tf.Tensor:
    """1D convolution layer (temporal convolution).

    Creates `<scope>/kernel` of shape `[kernel_size, in_channels, filters]`
    and, with `use_bias`, `<scope>/bias` of shape `[filters]`, where `<scope>`
    is `conv1d`, `conv1d_1`, ... or `name`.

    Args:
        inputs: Rank-3 tensor, `[batch, length, channels]` (or
            `[batch, channels, length]` with `channels_first`).
        filters: Number of output channels.
        kernel_size: Int or tuple of 1 int, the convolution window length.
        strides: Int or tuple of 1 int, the stride.
        padding: "valid", "same" or "causal" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        dilation_rate: Int or tuple of 1 int; above 1 requires `strides` 1.
        activation: Activation callable (or Keras name); None is linear.
        use_bias: Whether to add a bias.
        kernel_initializer: Initializer for the kernel (None: Glorot uniform).
        bias_initializer: Initializer for the bias (zeros).
        kernel_regularizer: Regularizer callable for the kernel.
        bias_regularizer: Regularizer callable for the bias.
        activity_regularizer: Regularizer callable for the output.
        kernel_constraint: Projection applied to the kernel after updates.
        bias_constraint: Projection applied to the bias after updates.
        trainable: Whether the variables are trainable.
        name: Variable scope name of the layer.
        reuse: True or `tf.compat.v1.AUTO_REUSE` to reuse a named layer.

    Returns:
        Output tensor of rank 3 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank, or unknown input channels.
        RuntimeError: if called eagerly.
    """
    return _conv(
        1,
        "conv1d",
        inputs,
        filters,
        kernel_size,
        strides,
        padding,
        data_format,
        dilation_rate,
        activation,
        use_bias,
        kernel_initializer,
        bias_initializer,
        kernel_regularizer,
        bias_regularizer,
        activity_regularizer,
        kernel_constraint,
        bias_constraint,
        trainable,
        name,
        reuse,
    )


def conv2d(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = (1, 1),
    padding: str = "valid",
    data_format: str = "channels_last",
    dilation_rate: Any = (1, 1),
    activation: Any = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = _ZEROS,
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    kernel_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> tf.Tensor:
    """2D convolution layer (spatial convolution over images).

    Creates `<scope>/kernel` of shape
    `[kernel_height, kernel_width, in_channels, filters]` and, with
    `use_bias`, `<scope>/bias` of shape `[filters]`, where `<scope>` is
    `conv2d`, `conv2d_1`, ... or `name`.

    Args:
        inputs: Rank-4 tensor, `[batch, height, width, channels]` (or
            `[batch, channels, height, width]` with `channels_first`).
        filters: Number of output channels.
        kernel_size: Int or tuple of 2 ints, the convolution window size.
        strides: Int or tuple of 2 ints, the strides.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        dilation_rate: Int or tuple of 2 ints; above 1 requires `strides` 1.
        activation: Activation callable (or Keras name); None is linear.
        use_bias: Whether to add a bias.
        kernel_initializer: Initializer for the kernel (None: Glorot uniform).
        bias_initializer: Initializer for the bias (zeros).
        kernel_regularizer: Regularizer callable for the kernel.
        bias_regularizer: Regularizer callable for the bias.
        activity_regularizer: Regularizer callable for the output.
        kernel_constraint: Projection applied to the kernel after updates.
        bias_constraint: Projection applied to the bias after updates.
        trainable: Whether the variables are trainable.
        name: Variable scope name of the layer.
        reuse: True or `tf.compat.v1.AUTO_REUSE` to reuse a named layer.

    Returns:
        Output tensor of rank 4 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank, or unknown input channels.
        RuntimeError: if called eagerly.
    """
    return _conv(
        2,
        "conv2d",
        inputs,
        filters,
        kernel_size,
        strides,
        padding,
        data_format,
        dilation_rate,
        activation,
        use_bias,
        kernel_initializer,
        bias_initializer,
        kernel_regularizer,
        bias_regularizer,
        activity_regularizer,
        kernel_constraint,
        bias_constraint,
        trainable,
        name,
        reuse,
    )


# ---- pooling -----------------------------------------------------------------
def _pool(
    rank: int,
    kind: str,
    pool_fn: Callable[..., tf.Tensor],
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: Any,
    data_format: Any,
    name: str | None,
) -> tf.Tensor:
    _require_graph(kind)
    pool_size = _int_tuple(pool_size, rank, "pool_size")
    strides = _int_tuple(strides, rank, "strides")
    padding = _check_padding(padding)
    channels_first = _is_channels_first(data_format)
    with _layer_scope(name, kind, None):
        x = tf.convert_to_tensor(inputs)
        _check_rank(x, rank + 2, kind)
        if channels_first:
            x = _to_channels_last(x)
        if rank == 1:
            x = tf.expand_dims(x, 1)
            pool_size, strides = (1, *pool_size), (1, *strides)
        outputs = pool_fn(
            x, ksize=list(pool_size), strides=list(strides), padding=padding.upper()
        )
        if rank == 1:
            outputs = tf.squeeze(outputs, [1])
        if channels_first:
            outputs = _to_channels_first(outputs)
        return outputs


def max_pooling1d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> tf.Tensor:
    """Max pooling layer for 1D inputs: the max over each window.

    Args:
        inputs: Rank-3 tensor, `[batch, length, channels]` (or
            `[batch, channels, length]` with `channels_first`).
        pool_size: Int or tuple of 1 int, the pooling window size.
        strides: Int or tuple of 1 int, the strides.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name scope of the layer (`max_pooling1d`, `max_pooling1d_1`, ...
            if None).

    Returns:
        Output tensor of rank 3 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank.
        RuntimeError: if called eagerly.
    """
    return _pool(
        1,
        "max_pooling1d",
        tf.nn.max_pool2d,
        inputs,
        pool_size,
        strides,
        padding,
        data_format,
        name,
    )


def max_pooling2d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> tf.Tensor:
    """Max pooling layer for 2D inputs: the max over each window.

    Args:
        inputs: Rank-4 tensor, `[batch, height, width, channels]` (or
            `[batch, channels, height, width]` with `channels_first`).
        pool_size: Int or tuple of 2 ints, the pooling window size.
        strides: Int or tuple of 2 ints, the strides.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name scope of the layer (`max_pooling2d`, `max_pooling2d_1`, ...
            if None).

    Returns:
        Output tensor of rank 4 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank.
        RuntimeError: if called eagerly.
    """
    return _pool(
        2,
        "max_pooling2d",
        tf.nn.max_pool2d,
        inputs,
        pool_size,
        strides,
        padding,
        data_format,
        name,
    )


def average_pooling1d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> tf.Tensor:
    """Average pooling layer for 1D inputs: the average over each window.

    With "same" padding, windows at the border average only the real inputs.

    Args:
        inputs: Rank-3 tensor, `[batch, length, channels]` (or
            `[batch, channels, length]` with `channels_first`).
        pool_size: Int or tuple of 1 int, the pooling window size.
        strides: Int or tuple of 1 int, the strides.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name scope of the layer (`average_pooling1d`, `average_pooling1d_1`, ...
            if None).

    Returns:
        Output tensor of rank 3 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank.
        RuntimeError: if called eagerly.
    """
    return _pool(
        1,
        "average_pooling1d",
        tf.nn.avg_pool2d,
        inputs,
        pool_size,
        strides,
        padding,
        data_format,
        name,
    )


def average_pooling2d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> tf.Tensor:
    """Average pooling layer for 2D inputs: the average over each window.

    With "same" padding, windows at the border average only the real inputs.

    Args:
        inputs: Rank-4 tensor, `[batch, height, width, channels]` (or
            `[batch, channels, height, width]` with `channels_first`).
        pool_size: Int or tuple of 2 ints, the pooling window size.
        strides: Int or tuple of 2 ints, the strides.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name scope of the layer (`average_pooling2d`, `average_pooling2d_1`, ...
            if None).

    Returns:
        Output tensor of rank 4 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank.
        RuntimeError: if called eagerly.
    """
    return _pool(
        2,
        "average_pooling2d",
        tf.nn.avg_pool2d,
        inputs,
        pool_size,
        strides,
        padding,
        data_format,
        name,
    )


# ---- dropout and flatten -----------------------------------------------------
def dropout(
    inputs: Any,
    rate: Any = 0.5,
    noise_shape: Any = None,
    seed: int | None = None,
    training: Any = False,
    name: str | None = None,
) -> tf.Tensor:
    """Applies dropout in training; the identity otherwise.

    In training each element is zeroed with probability `rate` and the kept
    ones are scaled by `1 / (1 - rate)`, so the expected sum is unchanged.

    Args:
        inputs: Input tensor.
        rate: Fraction of the inputs to drop, in `[0, 1)`.
        noise_shape: 1D shape of the keep/drop mask, broadcast against the
            inputs; None entries take the input's dimension (e.g.
            `[batch, 1, features]` drops the same features at every step).
        seed: Op-level random seed.
        training: Python bool or scalar bool tensor; dropout applies when it
            is true (a tensor selects at run time with `tf.cond`).
        name: Name scope of the layer (`dropout`, `dropout_1`, ...
            if None).

    Returns:
        Tensor with the shape and dtype of `inputs`.

    Raises:
        ValueError: if `rate` is a number outside `[0, 1)`.
        RuntimeError: if called eagerly.
    """
    _require_graph("dropout")
    if isinstance(rate, numbers.Real) and not 0 <= float(rate) < 1:
        raise ValueError(f"`rate` must be in [0, 1), received rate={rate!r}.")
    with _layer_scope(name, "dropout", None):
        x = tf.convert_to_tensor(inputs)

        def dropped() -> tf.Tensor:
            mask_shape = None
            if noise_shape is not None:
                dynamic = tf.shape(x)
                mask_shape = tf.stack(
                    [
                        dynamic[i] if dim is None else tf.constant(dim, tf.int32)
                        for i, dim in enumerate(noise_shape)
                    ]
                )
            return tf.nn.dropout(x, rate=rate, noise_shape=mask_shape, seed=seed)

        return _smart_cond(training, dropped, lambda: tf.identity(x))


def flatten(
    inputs: Any, name: str | None = None, data_format: str = "channels_last"
) -> tf.Tensor:
    """Flattens every dimension but the first (batch) one.

    With `channels_first`, the channels are moved last before flattening, so
    the element order matches a channels-last model.

    Args:
        inputs: Tensor of rank 1 or more (batch first).
        name: Name scope of the layer (`flatten`, `flatten_1`, ...
            if None).
        data_format: "channels_last" or "channels_first".

    Returns:
        Tensor of shape `[batch, product of the other dimensions]` (a rank-1
        input becomes `[batch, 1]`).

    Raises:
        ValueError: on an invalid `data_format` or a scalar input.
        RuntimeError: if called eagerly.
    """
    _require_graph("flatten")
    channels_first = _is_channels_first(data_format)
    with _layer_scope(name, "flatten", None):
        x = tf.convert_to_tensor(inputs)
        rank = x.shape.rank
        if rank == 0:
            raise ValueError("`flatten` needs inputs with a batch dimension.")
        if channels_first and rank is not None and rank > 2:
            x = _to_channels_last(x)
        if rank == 1:
            return tf.expand_dims(x, 1)
        if rank is None:
            return tf.reshape(x, [tf.shape(x)[0], -1])
        non_batch = x.shape[1:]
        if non_batch.is_fully_defined():
            size = functools.reduce(operator.mul, non_batch.as_list(), 1)
            return tf.reshape(x, [-1, size])
        batch = tf.compat.dimension_value(x.shape[0])
        if batch is not None:
            return tf.reshape(x, [batch, -1])
        return tf.reshape(x, [tf.shape(x)[0], -1])


# ---- batch normalization -----------------------------------------------------
def _assign_moving_average(
    variable: tf.Variable, value: tf.Tensor, momentum: Any
) -> tf.Operation:
    with tf.name_scope("AssignMovingAvg"):
        decay = tf.cast(1.0 - tf.convert_to_tensor(momentum), variable.dtype)
        delta = (variable - tf.cast(value, variable.dtype)) * decay
        return variable.assign_sub(delta, read_value=False)


def batch_normalization(
    inputs: Any,
    axis: Any = -1,
    momentum: Any = 0.99,
    epsilon: float = 1e-3,
    center: bool = True,
    scale: bool = True,
    beta_initializer: Any = _ZEROS,
    gamma_initializer: Any = _ONES,
    moving_mean_initializer: Any = _ZEROS,
    moving_variance_initializer: Any = _ONES,
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
    _require_graph("batch_normalization")
    if renorm or virtual_batch_size is not None or adjustment is not None:
        raise NotImplementedError(
            "keras_estimator.compat.layers.batch_normalization does not support "
            "`renorm`, `virtual_batch_size` or `adjustment`."
        )
    with _layer_scope(name, "batch_normalization", reuse):
        x = tf.convert_to_tensor(inputs)
        ndims = x.shape.rank
        if not ndims:
            raise ValueError(
                "`batch_normalization` needs inputs of known rank of at least 1, "
                f"received inputs with shape {x.shape}."
            )
        raw_axes = [axis] if isinstance(axis, numbers.Integral) else list(axis)
        axes = [int(a) + ndims if a < 0 else int(a) for a in raw_axes]
        if not axes or any(a < 0 or a >= ndims for a in axes):
            raise ValueError(f"Invalid axis {axis!r} for inputs of rank {ndims}.")
        if len(set(axes)) != len(axes):
            raise ValueError(f"Duplicate axis: {axis!r}.")
        axis_dims = {a: tf.compat.dimension_value(x.shape[a]) for a in axes}
        if any(d is None for d in axis_dims.values()):
            raise ValueError(
                "The normalized dimension of the inputs to `batch_normalization` "
                f"should be defined, received shape {x.shape} and axis={axis!r}."
            )
        if len(axes) == 1:
            param_shape = [axis_dims[axes[0]]]
        else:
            param_shape = [axis_dims.get(i, 1) for i in range(ndims)]
        broadcast_shape = [axis_dims.get(i, 1) for i in range(ndims)]

        if x.dtype in (tf.float16, tf.bfloat16):
            param_dtype = tf.float32
        elif x.dtype.is_floating:
            param_dtype = x.dtype
        else:
            x = tf.cast(x, tf.float32)
            param_dtype = tf.float32
        fused_like = (
            fused is not False
            and len(axes) == 1
            and param_dtype == tf.float32
            and (
                (ndims == 4 and axes[0] in (1, 3)) or (ndims == 5 and axes[0] in (1, 4))
            )
        )
        if fused_like:
            epsilon = max(epsilon, _FUSED_MIN_EPSILON)

        gamma = beta = None
        if scale:
            gamma = _add_variable(
                "gamma",
                param_shape,
                param_dtype,
                gamma_initializer,
                gamma_regularizer,
                gamma_constraint,
                trainable,
            )
        if center:
            beta = _add_variable(
                "beta",
                param_shape,
                param_dtype,
                beta_initializer,
                beta_regularizer,
                beta_constraint,
                trainable,
            )
        moving_options = {
            "trainable": False,
            "synchronization": tf.VariableSynchronization.ON_READ,
            "aggregation": tf.VariableAggregation.MEAN,
        }
        moving_mean = _add_variable(
            "moving_mean",
            param_shape,
            param_dtype,
            moving_mean_initializer,
            **moving_options,
        )
        moving_variance = _add_variable(
            "moving_variance",
            param_shape,
            param_dtype,
            moving_variance_initializer,
            **moving_options,
        )

        def broadcast(value: Any) -> Any:
            if value is None:
                return None
            return tf.reshape(value, broadcast_shape)

        compute_x = tf.cast(x, param_dtype)
        training_value = _static_bool(training)
        reduction_axes = [i for i in range(ndims) if i not in axes]

        def batch_statistics() -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
            mean, variance = tf.nn.moments(compute_x, reduction_axes, keepdims=True)
            mean = tf.reshape(mean, param_shape)
            variance = tf.reshape(variance, param_shape)
            update_variance = variance
            if fused_like:
                count = tf.cast(
                    tf.size(compute_x, tf.int64) // tf.size(variance, tf.int64),
                    param_dtype,
                )
                update_variance = variance * count / tf.maximum(count - 1.0, 1.0)
            return mean, variance, update_variance

        def moving_statistics() -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
            mean = tf.convert_to_tensor(moving_mean)
            variance = tf.convert_to_tensor(moving_variance)
            return mean, variance, variance

        if training_value is False:
            mean, variance, _ = moving_statistics()
        else:
            mean, variance, update_variance = _smart_cond(
                training, batch_statistics, moving_statistics
            )
            if training_value is None:
                update_momentum = _smart_cond(
                    training,
                    lambda: tf.convert_to_tensor(momentum, param_dtype),
                    lambda: tf.constant(1.0, param_dtype),
                )
            else:
                update_momentum = momentum
            for variable, value in (
                (moving_mean, mean),
                (moving_variance, update_variance),
            ):
                tf.compat.v1.add_to_collection(
                    _GraphKeys.UPDATE_OPS,
                    _assign_moving_average(variable, value, update_momentum),
                )

        outputs = tf.nn.batch_normalization(
            compute_x,
            broadcast(mean),
            broadcast(variance),
            offset=broadcast(beta),
            scale=broadcast(gamma),
            variance_epsilon=epsilon,
        )
        return tf.cast(outputs, x.dtype)
