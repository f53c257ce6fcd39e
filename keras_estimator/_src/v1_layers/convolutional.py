"""Convolution layers `Conv1D`, `Conv2D` and `Conv3D`."""

from __future__ import annotations

from typing import Any

from keras_estimator._src.v1_layers import common
from keras_estimator._src.v1_layers.conv_base import Conv


class Conv1D(Conv):
    """1D convolution layer (temporal convolution).

    Creates `<scope>/kernel` of shape
    `[kernel_size, in_channels, filters]` and, with `use_bias`,
    `<scope>/bias` of shape `[filters]`, where `<scope>` is `conv1d`,
    `conv1d_1`, ... or the layer's name. Inputs are
    `[batch, length, channels]` (or `[batch, channels, length]` with `channels_first`).

    Args:
        filters: Number of output channels.
        kernel_size: Int or tuple of 1 int, the convolution window.
        strides: Int or tuple of 1 int.
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
        name: Name of the layer (its variable scope, made unique per graph).
        **kwargs: Further `Layer` arguments.

    Raises:
        TypeError: if `filters` is not an integer.
        ValueError: on an invalid `padding`, `data_format` or size argument;
            when called, on inputs of another rank or unknown channels.
    """

    rank = 1
    _paddings = ("valid", "same", "causal")

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str | None = "channels_last",
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
        **kwargs: Any,
    ) -> None:
        super().__init__(
            filters, kernel_size, strides, padding, data_format, dilation_rate,
            activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name, **kwargs,
        )  # fmt: skip


class Conv2D(Conv):
    """2D convolution layer (spatial convolution over images).

    Creates `<scope>/kernel` of shape
    `[kernel_height, kernel_width, in_channels, filters]` and, with `use_bias`,
    `<scope>/bias` of shape `[filters]`, where `<scope>` is `conv2d`,
    `conv2d_1`, ... or the layer's name. Inputs are
    `[batch, height, width, channels]` (or `[batch, channels, height, width]` with `channels_first`).

    Args:
        filters: Number of output channels.
        kernel_size: Int or tuple of 2 ints, the convolution window.
        strides: Int or tuple of 2 ints.
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
        name: Name of the layer (its variable scope, made unique per graph).
        **kwargs: Further `Layer` arguments.

    Raises:
        TypeError: if `filters` is not an integer.
        ValueError: on an invalid `padding`, `data_format` or size argument;
            when called, on inputs of another rank or unknown channels.
    """

    rank = 2

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = (1, 1),
        padding: str = "valid",
        data_format: str | None = "channels_last",
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
        **kwargs: Any,
    ) -> None:
        super().__init__(
            filters, kernel_size, strides, padding, data_format, dilation_rate,
            activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name, **kwargs,
        )  # fmt: skip


class Conv3D(Conv):
    """3D convolution layer (over volumes or video).

    Creates `<scope>/kernel` of shape
    `[kernel_depth, kernel_height, kernel_width, in_channels, filters]` and, with `use_bias`,
    `<scope>/bias` of shape `[filters]`, where `<scope>` is `conv3d`,
    `conv3d_1`, ... or the layer's name. Inputs are
    `[batch, depth, height, width, channels]` (or channels second with `channels_first`).

    Args:
        filters: Number of output channels.
        kernel_size: Int or tuple of 3 ints, the convolution window.
        strides: Int or tuple of 3 ints.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        dilation_rate: Int or tuple of 3 ints; above 1 requires `strides` 1.
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
        name: Name of the layer (its variable scope, made unique per graph).
        **kwargs: Further `Layer` arguments.

    Raises:
        TypeError: if `filters` is not an integer.
        ValueError: on an invalid `padding`, `data_format` or size argument;
            when called, on inputs of another rank or unknown channels.
    """

    rank = 3

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = (1, 1, 1),
        padding: str = "valid",
        data_format: str | None = "channels_last",
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
        **kwargs: Any,
    ) -> None:
        super().__init__(
            filters, kernel_size, strides, padding, data_format, dilation_rate,
            activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name, **kwargs,
        )  # fmt: skip
