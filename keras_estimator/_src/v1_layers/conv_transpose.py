"""Transposed convolutions: `Conv2DTranspose`, `Conv3DTranspose` and functions.

A transposed convolution is the gradient of a convolution with respect to its
input: each input position scatters `kernel`-weighted copies into a window of
the output, which is `strides` times larger. The kernel is laid out as the
forward convolution's, `[*kernel_size, filters, in_channels]`, as in TF1.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator._src.v1_layers import common
from keras_estimator._src.v1_layers.conv_base import Conv


class ConvTranspose(Conv):
    """A transposed convolution of spatial rank `rank`; see `Conv2DTranspose`."""

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: str | None = "channels_last",
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
            filters, kernel_size, strides, padding, data_format, 1,
            activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name, **kwargs,
        )  # fmt: skip

    def _kernel_shape(self, in_channels: int) -> list[int]:
        return [*self.kernel_size, self.filters, in_channels]

    def _output_size(self, size: Any, axis: int) -> Any:
        """Output length along spatial `axis` for an input length `size`."""
        stride, kernel = self.strides[axis], self.kernel_size[axis]
        if self.padding == "same":
            return size * stride
        return size * stride + max(kernel - stride, 0)

    def _convolve(self, x: tf.Tensor) -> tf.Tensor:
        dynamic = tf.shape(x)
        spatial = []
        static = [x.shape[0]]
        for axis in range(self.rank):
            size = tf.compat.dimension_value(x.shape[axis + 1])
            known = size is not None
            spatial.append(
                self._output_size(size if known else dynamic[axis + 1], axis)
            )
            static.append(spatial[-1] if known else None)
        output_shape = tf.stack([dynamic[0], *spatial, self.filters])
        outputs = tf.nn.conv_transpose(
            x,
            self.kernel,
            output_shape,
            strides=list(self.strides),
            padding=self.padding.upper(),
        )
        outputs.set_shape([*static, self.filters])
        return outputs

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        del config["dilation_rate"]
        return config


class Conv2DTranspose(ConvTranspose):
    """Transposed 2D convolution layer (sometimes called deconvolution).

    Creates `<scope>/kernel` of shape
    `[kernel_height, kernel_width, filters, in_channels]` and, with `use_bias`,
    `<scope>/bias` of shape `[filters]`, where `<scope>` is
    `conv2d_transpose`, `conv2d_transpose_1`, ... or the layer's name. Each spatial output
    dimension is `input * stride` with "same" padding and
    `input * stride + max(kernel - stride, 0)` with "valid". Inputs are
    `[batch, height, width, channels]` (or `[batch, channels, height, width]` with `channels_first`).

    Args:
        filters: Number of output channels.
        kernel_size: Int or tuple of 2 ints, the window size.
        strides: Int or tuple of 2 ints, the upsampling factors.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
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
            filters, kernel_size, strides, padding, data_format,
            activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name, **kwargs,
        )  # fmt: skip


class Conv3DTranspose(ConvTranspose):
    """Transposed 3D convolution layer (sometimes called deconvolution).

    Creates `<scope>/kernel` of shape
    `[kernel_depth, kernel_height, kernel_width, filters, in_channels]` and, with `use_bias`,
    `<scope>/bias` of shape `[filters]`, where `<scope>` is
    `conv3d_transpose`, `conv3d_transpose_1`, ... or the layer's name. Each spatial output
    dimension is `input * stride` with "same" padding and
    `input * stride + max(kernel - stride, 0)` with "valid". Inputs are
    `[batch, depth, height, width, channels]` (or channels second with `channels_first`).

    Args:
        filters: Number of output channels.
        kernel_size: Int or tuple of 3 ints, the window size.
        strides: Int or tuple of 3 ints, the upsampling factors.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
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
            filters, kernel_size, strides, padding, data_format,
            activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name, **kwargs,
        )  # fmt: skip


def conv2d_transpose(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = (1, 1),
    padding: str = "valid",
    data_format: str = "channels_last",
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
    """Functional form of `Conv2DTranspose`; its scope is `name` or `conv2d_transpose`, ...

    Args:
        inputs: Rank-4 tensor, `[batch, height, width, channels]` (or `[batch, channels, height, width]` with `channels_first`).
        filters: Number of output channels.
        kernel_size: As in `Conv2DTranspose`, like the other arguments up to `trainable`.
        strides: See `Conv2DTranspose`.
        padding: "valid" or "same" (case-insensitive).
        data_format: See `Conv2DTranspose`.
        activation: See `Conv2DTranspose`.
        use_bias: See `Conv2DTranspose`.
        kernel_initializer: See `Conv2DTranspose`.
        bias_initializer: See `Conv2DTranspose`.
        kernel_regularizer: See `Conv2DTranspose`.
        bias_regularizer: See `Conv2DTranspose`.
        activity_regularizer: See `Conv2DTranspose`.
        kernel_constraint: See `Conv2DTranspose`.
        bias_constraint: See `Conv2DTranspose`.
        trainable: See `Conv2DTranspose`.
        name: Variable scope name of the layer, used as given.
        reuse: True or `tf.compat.v1.AUTO_REUSE` to reuse a named layer.

    Returns:
        Output tensor of rank 4 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank, or unknown input channels.
        RuntimeError: if called eagerly.
    """
    common.require_graph("conv2d_transpose")
    layer = Conv2DTranspose(
        filters, kernel_size, strides, padding, data_format,
        activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name, _scope=name, _reuse=reuse,
    )  # fmt: skip
    return layer.apply(inputs)


def conv3d_transpose(
    inputs: Any,
    filters: int,
    kernel_size: Any,
    strides: Any = (1, 1, 1),
    padding: str = "valid",
    data_format: str = "channels_last",
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
    """Functional form of `Conv3DTranspose`; its scope is `name` or `conv3d_transpose`, ...

    Args:
        inputs: Rank-5 tensor, `[batch, depth, height, width, channels]` (or channels second with `channels_first`).
        filters: Number of output channels.
        kernel_size: As in `Conv3DTranspose`, like the other arguments up to `trainable`.
        strides: See `Conv3DTranspose`.
        padding: "valid" or "same" (case-insensitive).
        data_format: See `Conv3DTranspose`.
        activation: See `Conv3DTranspose`.
        use_bias: See `Conv3DTranspose`.
        kernel_initializer: See `Conv3DTranspose`.
        bias_initializer: See `Conv3DTranspose`.
        kernel_regularizer: See `Conv3DTranspose`.
        bias_regularizer: See `Conv3DTranspose`.
        activity_regularizer: See `Conv3DTranspose`.
        kernel_constraint: See `Conv3DTranspose`.
        bias_constraint: See `Conv3DTranspose`.
        trainable: See `Conv3DTranspose`.
        name: Variable scope name of the layer, used as given.
        reuse: True or `tf.compat.v1.AUTO_REUSE` to reuse a named layer.

    Returns:
        Output tensor of rank 5 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank, or unknown input channels.
        RuntimeError: if called eagerly.
    """
    common.require_graph("conv3d_transpose")
    layer = Conv3DTranspose(
        filters, kernel_size, strides, padding, data_format,
        activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint, trainable, name, _scope=name, _reuse=reuse,
    )  # fmt: skip
    return layer.apply(inputs)
