"""`Conv`: what every convolution layer shares.

Argument checks, channels-first handling (transposed to channels-last around
the convolution, since the CPU kernels take only that), the kernel and bias,
the activation. `Conv1D`/`2D`/`3D` (`convolutional`) use it as it is; the
transposed and separable kinds (`conv_transpose`, `separable`) override its
kernel shape, `build` or `_convolve`.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator._src.v1_layers import common
from keras_estimator._src.v1_layers.base import Layer
from keras_estimator._src.v1_layers.input_spec import InputSpec


class Conv(Layer):
    """A convolution of spatial rank `rank` (1, 2 or 3); see `Conv2D`.

    Subclasses set `rank` and `_paddings` (the padding values they accept)
    and may override `_kernel_shape`, `build` and `_convolve`, which receives
    and returns channels-last tensors.
    """

    rank: int = 2
    _paddings: tuple[str, ...] = ("valid", "same")

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
            trainable=trainable,
            name=name,
            activity_regularizer=activity_regularizer,
            **kwargs,
        )
        rank = self.rank
        self.filters = common.positive_int(filters, "filters")
        self.kernel_size = common.int_tuple(kernel_size, rank, "kernel_size")
        self.strides = common.int_tuple(strides, rank, "strides")
        self.dilation_rate = common.int_tuple(dilation_rate, rank, "dilation_rate")
        self.padding = common.check_padding(padding, self._paddings)
        self._channels_first = common.is_channels_first(data_format)
        self.data_format = "channels_first" if self._channels_first else "channels_last"
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(
                "`strides` > 1 is not supported together with `dilation_rate` > 1, "
                f"received strides={self.strides} and "
                f"dilation_rate={self.dilation_rate}. Set one of them to 1."
            )
        self.activation = activation
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.activity_regularizer = activity_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.kernel: tf.Variable | None = None
        self.bias: tf.Variable | None = None
        self.input_spec = InputSpec(ndim=rank + 2)

    @property
    def _channel_axis(self) -> int:
        return 1 if self._channels_first else -1

    def _input_channels(self, input_shape: Any) -> int:
        """The static channel count of the inputs; ValueError if unknown."""
        channels = tf.compat.dimension_value(input_shape[self._channel_axis])
        if channels is None:
            raise ValueError(
                f"The channel dimension of the inputs to `{type(self).__name__}` "
                f"should be defined, received inputs with shape {input_shape}. "
                "Give the inputs a static channel dimension."
            )
        return int(channels)

    def _kernel_shape(self, in_channels: int) -> list[int]:
        return [*self.kernel_size, in_channels, self.filters]

    def build(self, input_shape: Any) -> None:
        in_channels = self._input_channels(input_shape)
        self.kernel = self.add_weight(
            "kernel",
            self._kernel_shape(in_channels),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self._build_bias()
        self.input_spec = InputSpec(
            ndim=self.rank + 2, axes={self._channel_axis: in_channels}
        )

    def _build_bias(self) -> None:
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                [self.filters],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def _convolve(self, x: tf.Tensor) -> tf.Tensor:
        """Convolves channels-last `x` (left-padding it for "causal")."""
        padding = self.padding
        if padding == "causal":
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            x = tf.pad(x, [[0, 0], [left, 0], [0, 0]])
            padding = "valid"
        return tf.nn.convolution(
            x,
            self.kernel,
            strides=list(self.strides),
            padding=padding.upper(),
            dilations=list(self.dilation_rate),
        )

    def call(self, inputs: Any) -> tf.Tensor:
        x = common.as_float_tensor(inputs)
        if self._channels_first:
            x = common.to_channels_last(x)
        outputs = self._convolve(x)
        if self.bias is not None:
            outputs = tf.nn.bias_add(outputs, self.bias)
        if self._channels_first:
            outputs = common.to_channels_first(outputs)
        return common.activate(outputs, self.activation)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(
            filters=self.filters,
            kernel_size=self.kernel_size,
            strides=self.strides,
            padding=self.padding,
            data_format=self.data_format,
            dilation_rate=self.dilation_rate,
            activation=self.activation,
            use_bias=self.use_bias,
            kernel_initializer=self.kernel_initializer,
            bias_initializer=self.bias_initializer,
            kernel_regularizer=self.kernel_regularizer,
            bias_regularizer=self.bias_regularizer,
            activity_regularizer=self.activity_regularizer,
            kernel_constraint=self.kernel_constraint,
            bias_constraint=self.bias_constraint,
        )
        return config
