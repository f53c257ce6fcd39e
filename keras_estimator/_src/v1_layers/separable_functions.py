"""Functional separable convolutions: `separable_conv1d`, `separable_conv2d`."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator._src.v1_layers import common
from keras_estimator._src.v1_layers.separable import SeparableConv1D, SeparableConv2D


def separable_conv1d(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = 1,
    padding: str = "valid",
    data_format: str = "channels_last",
    dilation_rate: Any = 1,
    depth_multiplier: int = 1,
    activation: Any = None,
    use_bias: bool = True,
    depthwise_initializer: Any = None,
    pointwise_initializer: Any = None,
    bias_initializer: Any = common.ZEROS,
    depthwise_regularizer: Any = None,
    pointwise_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    depthwise_constraint: Any = None,
    pointwise_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> tf.Tensor:
    """Functional form of `SeparableConv1D`; its scope is `name` or `separable_conv1d`, ...

    Args:
        inputs: Rank-3 tensor, `[batch, length, channels]` (or `[batch, channels, length]` with `channels_first`).
        filters: Number of output channels.
        kernel_size: As in `SeparableConv1D`, like the other arguments up to `trainable`.
        strides: See `SeparableConv1D`.
        padding: "valid", "same" or "causal" (case-insensitive).
        data_format: See `SeparableConv1D`.
        dilation_rate: See `SeparableConv1D`.
        depth_multiplier: See `SeparableConv1D`.
        activation: See `SeparableConv1D`.
        use_bias: See `SeparableConv1D`.
        depthwise_initializer: See `SeparableConv1D`.
        pointwise_initializer: See `SeparableConv1D`.
        bias_initializer: See `SeparableConv1D`.
        depthwise_regularizer: See `SeparableConv1D`.
        pointwise_regularizer: See `SeparableConv1D`.
        bias_regularizer: See `SeparableConv1D`.
        activity_regularizer: See `SeparableConv1D`.
        depthwise_constraint: See `SeparableConv1D`.
        pointwise_constraint: See `SeparableConv1D`.
        bias_constraint: See `SeparableConv1D`.
        trainable: See `SeparableConv1D`.
        name: Variable scope name of the layer, used as given.
        reuse: True or `tf.compat.v1.AUTO_REUSE` to reuse a named layer.

    Returns:
        Output tensor of rank 3 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank, or unknown input channels.
        RuntimeError: if called eagerly.
    """
    common.require_graph("separable_conv1d")
    layer = SeparableConv1D(
        filters, kernel_size, strides, padding, data_format, dilation_rate,
        depth_multiplier, activation, use_bias, depthwise_initializer, pointwise_initializer, bias_initializer, depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer, depthwise_constraint, pointwise_constraint, bias_constraint, trainable, name, _scope=name, _reuse=reuse,
    )  # fmt: skip
    return layer.apply(inputs)


def separable_conv2d(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = (1, 1),
    padding: str = "valid",
    data_format: str = "channels_last",
    dilation_rate: Any = (1, 1),
    depth_multiplier: int = 1,
    activation: Any = None,
    use_bias: bool = True,
    depthwise_initializer: Any = None,
    pointwise_initializer: Any = None,
    bias_initializer: Any = common.ZEROS,
    depthwise_regularizer: Any = None,
    pointwise_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    depthwise_constraint: Any = None,
    pointwise_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> tf.Tensor:
    """Functional form of `SeparableConv2D`; its scope is `name` or `separable_conv2d`, ...

    Args:
        inputs: Rank-4 tensor, `[batch, height, width, channels]` (or `[batch, channels, height, width]` with `channels_first`).
        filters: Number of output channels.
        kernel_size: As in `SeparableConv2D`, like the other arguments up to `trainable`.
        strides: See `SeparableConv2D`.
        padding: "valid" or "same" (case-insensitive).
        data_format: See `SeparableConv2D`.
        dilation_rate: See `SeparableConv2D`.
        depth_multiplier: See `SeparableConv2D`.
        activation: See `SeparableConv2D`.
        use_bias: See `SeparableConv2D`.
        depthwise_initializer: See `SeparableConv2D`.
        pointwise_initializer: See `SeparableConv2D`.
        bias_initializer: See `SeparableConv2D`.
        depthwise_regularizer: See `SeparableConv2D`.
        pointwise_regularizer: See `SeparableConv2D`.
        bias_regularizer: See `SeparableConv2D`.
        activity_regularizer: See `SeparableConv2D`.
        depthwise_constraint: See `SeparableConv2D`.
        pointwise_constraint: See `SeparableConv2D`.
        bias_constraint: See `SeparableConv2D`.
        trainable: See `SeparableConv2D`.
        name: Variable scope name of the layer, used as given.
        reuse: True or `tf.compat.v1.AUTO_REUSE` to reuse a named layer.

    Returns:
        Output tensor of rank 4 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank, or unknown input channels.
        RuntimeError: if called eagerly.
    """
    common.require_graph("separable_conv2d")
    layer = SeparableConv2D(
        filters, kernel_size, strides, padding, data_format, dilation_rate,
        depth_multiplier, activation, use_bias, depthwise_initializer, pointwise_initializer, bias_initializer, depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer, depthwise_constraint, pointwise_constraint, bias_constraint, trainable, name, _scope=name, _reuse=reuse,
    )  # fmt: skip
    return layer.apply(inputs)
