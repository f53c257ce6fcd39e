"""Functional convolutions: `conv1d`, `conv2d` and `conv3d`."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator._src.v1_layers import common
from keras_estimator._src.v1_layers.convolutional import Conv1D, Conv2D, Conv3D


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
    bias_initializer: Any = common.ZEROS,
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    kernel_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> tf.Tensor:
    """Functional form of `Conv1D`; its scope is `name` or `conv1d`, ...

    Args:
        inputs: Rank-3 tensor, `[batch, length, channels]` (or `[batch, channels, length]` with `channels_first`).
        filters: Number of output channels.
        kernel_size: As in `Conv1D`, like the other arguments up to `trainable`.
        strides: See `Conv1D`.
        padding: "valid", "same" or "causal" (case-insensitive).
        data_format: See `Conv1D`.
        dilation_rate: See `Conv1D`.
        activation: See `Conv1D`.
        use_bias: See `Conv1D`.
        kernel_initializer: See `Conv1D`.
        bias_initializer: See `Conv1D`.
        kernel_regularizer: See `Conv1D`.
        bias_regularizer: See `Conv1D`.
        activity_regularizer: See `Conv1D`.
        kernel_constraint: See `Conv1D`.
        bias_constraint: See `Conv1D`.
        trainable: See `Conv1D`.
        name: Variable scope name of the layer, used as given.
        reuse: True or `tf.compat.v1.AUTO_REUSE` to reuse a named layer.

    Returns:
        Output tensor of rank 3 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank, or unknown input channels.
        RuntimeError: if called eagerly.
    """
    common.require_graph("conv1d")
    layer = Conv1D(
        filters, kernel_size, strides, padding, data_format, dilation_rate,
        activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name, _scope=name, _reuse=reuse,
    )  # fmt: skip
    return layer.apply(inputs)


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
    bias_initializer: Any = common.ZEROS,
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    kernel_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> tf.Tensor:
    """Functional form of `Conv2D`; its scope is `name` or `conv2d`, ...

    Args:
        inputs: Rank-4 tensor, `[batch, height, width, channels]` (or `[batch, channels, height, width]` with `channels_first`).
        filters: Number of output channels.
        kernel_size: As in `Conv2D`, like the other arguments up to `trainable`.
        strides: See `Conv2D`.
        padding: "valid" or "same" (case-insensitive).
        data_format: See `Conv2D`.
        dilation_rate: See `Conv2D`.
        activation: See `Conv2D`.
        use_bias: See `Conv2D`.
        kernel_initializer: See `Conv2D`.
        bias_initializer: See `Conv2D`.
        kernel_regularizer: See `Conv2D`.
        bias_regularizer: See `Conv2D`.
        activity_regularizer: See `Conv2D`.
        kernel_constraint: See `Conv2D`.
        bias_constraint: See `Conv2D`.
        trainable: See `Conv2D`.
        name: Variable scope name of the layer, used as given.
        reuse: True or `tf.compat.v1.AUTO_REUSE` to reuse a named layer.

    Returns:
        Output tensor of rank 4 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank, or unknown input channels.
        RuntimeError: if called eagerly.
    """
    common.require_graph("conv2d")
    layer = Conv2D(
        filters, kernel_size, strides, padding, data_format, dilation_rate,
        activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name, _scope=name, _reuse=reuse,
    )  # fmt: skip
    return layer.apply(inputs)


def conv3d(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = (1, 1, 1),
    padding: str = "valid",
    data_format: str = "channels_last",
    dilation_rate: Any = (1, 1, 1),
    activation: Any = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = common.ZEROS,
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    kernel_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> tf.Tensor:
    """Functional form of `Conv3D`; its scope is `name` or `conv3d`, ...

    Args:
        inputs: Rank-5 tensor, `[batch, depth, height, width, channels]` (or channels second with `channels_first`).
        filters: Number of output channels.
        kernel_size: As in `Conv3D`, like the other arguments up to `trainable`.
        strides: See `Conv3D`.
        padding: "valid" or "same" (case-insensitive).
        data_format: See `Conv3D`.
        dilation_rate: See `Conv3D`.
        activation: See `Conv3D`.
        use_bias: See `Conv3D`.
        kernel_initializer: See `Conv3D`.
        bias_initializer: See `Conv3D`.
        kernel_regularizer: See `Conv3D`.
        bias_regularizer: See `Conv3D`.
        activity_regularizer: See `Conv3D`.
        kernel_constraint: See `Conv3D`.
        bias_constraint: See `Conv3D`.
        trainable: See `Conv3D`.
        name: Variable scope name of the layer, used as given.
        reuse: True or `tf.compat.v1.AUTO_REUSE` to reuse a named layer.

    Returns:
        Output tensor of rank 5 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank, or unknown input channels.
        RuntimeError: if called eagerly.
    """
    common.require_graph("conv3d")
    layer = Conv3D(
        filters, kernel_size, strides, padding, data_format, dilation_rate,
        activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name, _scope=name, _reuse=reuse,
    )  # fmt: skip
    return layer.apply(inputs)
