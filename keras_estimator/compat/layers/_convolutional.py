"""Convolution layers: `conv1d` and `conv2d`."""

from __future__ import annotations

from typing import Any, NamedTuple

import tensorflow as tf

from keras_estimator.compat.layers import _common


class _ConvArguments(NamedTuple):
    """The size and layout arguments of a convolution, normalized."""

    filters: int
    kernel_size: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    padding: str
    channels_first: bool


def _conv_arguments(
    rank: int,
    filters: int,
    kernel_size: Any,
    strides: Any,
    padding: Any,
    data_format: Any,
    dilation_rate: Any,
) -> _ConvArguments:
    """Validates and normalizes the arguments of a rank-`rank` convolution."""
    filters = int(filters)
    if filters <= 0:
        raise ValueError(
            f"`filters` must be a positive integer, received filters={filters}."
        )
    kernel_size = _common.int_tuple(kernel_size, rank, "kernel_size")
    strides = _common.int_tuple(strides, rank, "strides")
    dilations = _common.int_tuple(dilation_rate, rank, "dilation_rate")
    padding = _common.check_padding(
        padding, ("valid", "same", "causal") if rank == 1 else ("valid", "same")
    )
    channels_first = _common.is_channels_first(data_format)
    if max(strides) > 1 and max(dilations) > 1:
        raise ValueError(
            "`strides` > 1 is not supported together with `dilation_rate` > 1, "
            f"received strides={strides} and dilation_rate={dilations}."
        )
    return _ConvArguments(
        filters, kernel_size, strides, dilations, padding, channels_first
    )


def _convolve(x: tf.Tensor, kernel: tf.Variable, args: _ConvArguments) -> tf.Tensor:
    """Convolves channels-last `x` with `kernel` (left-padding for "causal")."""
    padding = args.padding
    if padding == "causal":
        left = args.dilations[0] * (args.kernel_size[0] - 1)
        x = tf.pad(x, [[0, 0], [left, 0], [0, 0]])
        padding = "valid"
    return tf.nn.convolution(
        x,
        kernel,
        strides=list(args.strides),
        padding=padding.upper(),
        dilations=list(args.dilations),
    )


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
    """The convolution layer `kind` of spatial rank `rank` (`conv1d`, ...)."""
    _common.require_graph(kind)
    args = _conv_arguments(
        rank, filters, kernel_size, strides, padding, data_format, dilation_rate
    )
    with _common.layer_scope(name, kind, reuse):
        x = _common.as_float_tensor(inputs)
        _common.check_rank(x, rank + 2, kind)
        if args.channels_first:
            x = _common.to_channels_last(x)
        in_channels = tf.compat.dimension_value(x.shape[-1])
        if in_channels is None:
            raise ValueError(
                f"The channel dimension of the inputs to `{kind}` should be "
                f"defined, received inputs with shape {inputs.shape}."
            )
        kernel, bias = _common.kernel_and_bias(
            [*args.kernel_size, in_channels, args.filters],
            args.filters,
            x.dtype,
            use_bias,
            kernel_initializer,
            bias_initializer,
            kernel_regularizer,
            bias_regularizer,
            kernel_constraint,
            bias_constraint,
            trainable,
        )
        outputs = _convolve(x, kernel, args)
        if bias is not None:
            outputs = tf.nn.bias_add(outputs, bias)
        if args.channels_first:
            outputs = _common.to_channels_first(outputs)
        return _common.finish(outputs, activation, activity_regularizer)


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
    bias_initializer: Any = _common.ZEROS,
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
    bias_initializer: Any = _common.ZEROS,
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
