"""Depthwise separable convolutions: `SeparableConv1D` and `SeparableConv2D`.

A depthwise convolution filters each input channel on its own
(`depth_multiplier` outputs per channel), then a 1x1 pointwise convolution
mixes the channels. 1D inputs run through the 2D kernel with a height of 1.
The functional forms are in `separable_functions`.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator._src.v1_layers import common
from keras_estimator._src.v1_layers.conv_base import Conv
from keras_estimator._src.v1_layers.input_spec import InputSpec


class SeparableConv(Conv):
    """A separable convolution of spatial rank 1 or 2; see `SeparableConv2D`."""

    _paddings = ("valid", "same", "causal")

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str | None = "channels_last",
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
        **kwargs: Any,
    ) -> None:
        if self.rank != 1 and isinstance(padding, str) and padding.lower() == "causal":
            raise ValueError(
                f"`padding` must be one of 'valid' or 'same' (case-insensitive), "
                f"received padding={padding!r}; 'causal' is for 1D inputs."
            )
        super().__init__(
            filters, kernel_size, strides, padding, data_format, dilation_rate,
            activation=activation, use_bias=use_bias,
            bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer,
            bias_constraint=bias_constraint, trainable=trainable, name=name,
            **kwargs,
        )  # fmt: skip
        self.depth_multiplier = common.positive_int(
            depth_multiplier, "depth_multiplier"
        )
        self.depthwise_initializer = depthwise_initializer
        self.pointwise_initializer = pointwise_initializer
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer
        self.depthwise_constraint = depthwise_constraint
        self.pointwise_constraint = pointwise_constraint
        self.depthwise_kernel: tf.Variable | None = None
        self.pointwise_kernel: tf.Variable | None = None

    def build(self, input_shape: Any) -> None:
        in_channels = self._input_channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel",
            [*self.kernel_size, in_channels, self.depth_multiplier],
            initializer=self.depthwise_initializer,
            regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint,
        )
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel",
            [*([1] * self.rank), in_channels * self.depth_multiplier, self.filters],
            initializer=self.pointwise_initializer,
            regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint,
        )
        self._build_bias()
        self.input_spec = InputSpec(
            ndim=self.rank + 2, axes={self._channel_axis: in_channels}
        )

    def _convolve(self, x: tf.Tensor) -> tf.Tensor:
        depthwise: Any = self.depthwise_kernel
        pointwise: Any = self.pointwise_kernel
        strides, dilations = self.strides, self.dilation_rate
        padding = self.padding
        if padding == "causal":
            left = dilations[0] * (self.kernel_size[0] - 1)
            x = tf.pad(x, [[0, 0], [left, 0], [0, 0]])
            padding = "valid"
        if self.rank == 1:
            x = tf.expand_dims(x, 1)
            depthwise = tf.expand_dims(depthwise, 0)
            pointwise = tf.expand_dims(pointwise, 0)
            strides, dilations = (1, *strides), (1, *dilations)
        outputs = tf.nn.separable_conv2d(
            x,
            depthwise,
            pointwise,
            strides=[1, *strides, 1],
            padding=padding.upper(),
            dilations=list(dilations),
        )
        return tf.squeeze(outputs, [1]) if self.rank == 1 else outputs

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        for key in ("kernel_initializer", "kernel_regularizer", "kernel_constraint"):
            del config[key]
        config.update(
            depth_multiplier=self.depth_multiplier,
            depthwise_initializer=self.depthwise_initializer,
            pointwise_initializer=self.pointwise_initializer,
            depthwise_regularizer=self.depthwise_regularizer,
            pointwise_regularizer=self.pointwise_regularizer,
            depthwise_constraint=self.depthwise_constraint,
            pointwise_constraint=self.pointwise_constraint,
        )
        return config


class SeparableConv1D(SeparableConv):
    """Depthwise separable 1D convolution layer.

    Creates, in `<scope>` (`separable_conv1d`, `separable_conv1d_1`, ... or the layer's
    name), `depthwise_kernel` of shape
    `[kernel_size, in_channels, depth_multiplier]`, `pointwise_kernel` of
    shape `[1, in_channels * depth_multiplier, filters]` and, with
    `use_bias`, `bias` of shape `[filters]`. Inputs are
    `[batch, length, channels]` (or `[batch, channels, length]` with `channels_first`).

    Args:
        filters: Number of output channels (of the pointwise convolution).
        kernel_size: Int or tuple of 1 int, the depthwise window.
        strides: Int or tuple of 1 int (equal ones for 2D).
        padding: "valid", "same" or "causal" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        dilation_rate: Int or tuple of 1 int; above 1 requires `strides` 1.
        depth_multiplier: Depthwise output channels per input channel.
        activation: Activation callable (or Keras name); None is linear.
        use_bias: Whether to add a bias.
        depthwise_initializer: Initializer for the depthwise kernel (None:
            Glorot uniform).
        pointwise_initializer: Initializer for the pointwise kernel (None:
            Glorot uniform).
        bias_initializer: Initializer for the bias (zeros).
        depthwise_regularizer: Regularizer callable for the depthwise kernel.
        pointwise_regularizer: Regularizer callable for the pointwise kernel.
        bias_regularizer: Regularizer callable for the bias.
        activity_regularizer: Regularizer callable for the output.
        depthwise_constraint: Projection applied to the depthwise kernel.
        pointwise_constraint: Projection applied to the pointwise kernel.
        bias_constraint: Projection applied to the bias after updates.
        trainable: Whether the variables are trainable.
        name: Name of the layer (its variable scope, made unique per graph).
        **kwargs: Further `Layer` arguments.

    Raises:
        TypeError: if `filters` or `depth_multiplier` is not an integer.
        ValueError: on an invalid `padding`, `data_format` or size argument;
            when called, on inputs of another rank or unknown channels.
    """

    rank = 1

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str | None = "channels_last",
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
        **kwargs: Any,
    ) -> None:
        super().__init__(
            filters, kernel_size, strides, padding, data_format, dilation_rate,
            depth_multiplier, activation, use_bias, depthwise_initializer, pointwise_initializer, bias_initializer, depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer, depthwise_constraint, pointwise_constraint, bias_constraint, trainable, name, **kwargs,
        )  # fmt: skip


class SeparableConv2D(SeparableConv):
    """Depthwise separable 2D convolution layer.

    Creates, in `<scope>` (`separable_conv2d`, `separable_conv2d_1`, ... or the layer's
    name), `depthwise_kernel` of shape
    `[kernel_height, kernel_width, in_channels, depth_multiplier]`, `pointwise_kernel` of
    shape `[1, 1, in_channels * depth_multiplier, filters]` and, with
    `use_bias`, `bias` of shape `[filters]`. Inputs are
    `[batch, height, width, channels]` (or `[batch, channels, height, width]` with `channels_first`).

    Args:
        filters: Number of output channels (of the pointwise convolution).
        kernel_size: Int or tuple of 2 ints, the depthwise window.
        strides: Int or tuple of 2 ints (equal ones for 2D).
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        dilation_rate: Int or tuple of 2 ints; above 1 requires `strides` 1.
        depth_multiplier: Depthwise output channels per input channel.
        activation: Activation callable (or Keras name); None is linear.
        use_bias: Whether to add a bias.
        depthwise_initializer: Initializer for the depthwise kernel (None:
            Glorot uniform).
        pointwise_initializer: Initializer for the pointwise kernel (None:
            Glorot uniform).
        bias_initializer: Initializer for the bias (zeros).
        depthwise_regularizer: Regularizer callable for the depthwise kernel.
        pointwise_regularizer: Regularizer callable for the pointwise kernel.
        bias_regularizer: Regularizer callable for the bias.
        activity_regularizer: Regularizer callable for the output.
        depthwise_constraint: Projection applied to the depthwise kernel.
        pointwise_constraint: Projection applied to the pointwise kernel.
        bias_constraint: Projection applied to the bias after updates.
        trainable: Whether the variables are trainable.
        name: Name of the layer (its variable scope, made unique per graph).
        **kwargs: Further `Layer` arguments.

    Raises:
        TypeError: if `filters` or `depth_multiplier` is not an integer.
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
        **kwargs: Any,
    ) -> None:
        super().__init__(
            filters, kernel_size, strides, padding, data_format, dilation_rate,
            depth_multiplier, activation, use_bias, depthwise_initializer, pointwise_initializer, bias_initializer, depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer, depthwise_constraint, pointwise_constraint, bias_constraint, trainable, name, **kwargs,
        )  # fmt: skip
