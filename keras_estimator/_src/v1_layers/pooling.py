"""Pooling layers: max and average pooling over 1D, 2D and 3D inputs.

The functional forms are in `pooling_functions`.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator._src.v1_layers import common
from keras_estimator._src.v1_layers.base import Layer
from keras_estimator._src.v1_layers.input_spec import InputSpec


class Pooling(Layer):
    """Pooling of spatial rank `rank` that reduces each window with `_pool`.

    Subclasses set `rank` and `_pool` (`tf.nn.max_pool` or `tf.nn.avg_pool`,
    which take channels-last inputs of any spatial rank).
    """

    rank: int = 2
    _pool = staticmethod(tf.nn.max_pool)

    def __init__(
        self,
        pool_size: Any,
        strides: Any,
        padding: str = "valid",
        data_format: str | None = "channels_last",
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        self.pool_size = common.int_tuple(pool_size, self.rank, "pool_size")
        self.strides = common.int_tuple(strides, self.rank, "strides")
        self.padding = common.check_padding(padding)
        self._channels_first = common.is_channels_first(data_format)
        self.data_format = "channels_first" if self._channels_first else "channels_last"
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs: Any) -> tf.Tensor:
        x = tf.convert_to_tensor(inputs)
        if self._channels_first:
            x = common.to_channels_last(x)
        outputs = type(self)._pool(
            x,
            ksize=list(self.pool_size),
            strides=list(self.strides),
            padding=self.padding.upper(),
        )
        if self._channels_first:
            outputs = common.to_channels_first(outputs)
        return outputs

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(
            pool_size=self.pool_size,
            strides=self.strides,
            padding=self.padding,
            data_format=self.data_format,
        )
        return config


class MaxPooling1D(Pooling):
    """Max pooling layer for 1D inputs: the max over each window.

    Inputs are `[batch, length, channels]` (or `[batch, channels, length]` with `channels_first`).

    Args:
        pool_size: Int or tuple of 1 int, the window size.
        strides: Int or tuple of 1 int.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name of the layer (`max_pooling1d`, `max_pooling1d_1`, ... if None).
        **kwargs: Further `Layer` arguments.

    Raises:
        ValueError: on an invalid `padding`, `data_format` or size argument;
            when called, on inputs of another rank.
    """

    rank = 1
    _pool = staticmethod(tf.nn.max_pool)


class MaxPooling2D(Pooling):
    """Max pooling layer for 2D inputs: the max over each window.

    Inputs are `[batch, height, width, channels]` (or `[batch, channels, height, width]` with `channels_first`).

    Args:
        pool_size: Int or tuple of 2 ints, the window size.
        strides: Int or tuple of 2 ints.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name of the layer (`max_pooling2d`, `max_pooling2d_1`, ... if None).
        **kwargs: Further `Layer` arguments.

    Raises:
        ValueError: on an invalid `padding`, `data_format` or size argument;
            when called, on inputs of another rank.
    """

    rank = 2
    _pool = staticmethod(tf.nn.max_pool)


class MaxPooling3D(Pooling):
    """Max pooling layer for 3D inputs: the max over each window.

    Inputs are `[batch, depth, height, width, channels]` (or channels second with `channels_first`).

    Args:
        pool_size: Int or tuple of 3 ints, the window size.
        strides: Int or tuple of 3 ints.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name of the layer (`max_pooling3d`, `max_pooling3d_1`, ... if None).
        **kwargs: Further `Layer` arguments.

    Raises:
        ValueError: on an invalid `padding`, `data_format` or size argument;
            when called, on inputs of another rank.
    """

    rank = 3
    _pool = staticmethod(tf.nn.max_pool)


class AveragePooling1D(Pooling):
    """Average pooling layer for 1D inputs: the average over each window.

    With "same" padding, windows at the border average only the real inputs.

    Inputs are `[batch, length, channels]` (or `[batch, channels, length]` with `channels_first`).

    Args:
        pool_size: Int or tuple of 1 int, the window size.
        strides: Int or tuple of 1 int.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name of the layer (`average_pooling1d`, `average_pooling1d_1`, ... if None).
        **kwargs: Further `Layer` arguments.

    Raises:
        ValueError: on an invalid `padding`, `data_format` or size argument;
            when called, on inputs of another rank.
    """

    rank = 1
    _pool = staticmethod(tf.nn.avg_pool)


class AveragePooling2D(Pooling):
    """Average pooling layer for 2D inputs: the average over each window.

    With "same" padding, windows at the border average only the real inputs.

    Inputs are `[batch, height, width, channels]` (or `[batch, channels, height, width]` with `channels_first`).

    Args:
        pool_size: Int or tuple of 2 ints, the window size.
        strides: Int or tuple of 2 ints.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name of the layer (`average_pooling2d`, `average_pooling2d_1`, ... if None).
        **kwargs: Further `Layer` arguments.

    Raises:
        ValueError: on an invalid `padding`, `data_format` or size argument;
            when called, on inputs of another rank.
    """

    rank = 2
    _pool = staticmethod(tf.nn.avg_pool)


class AveragePooling3D(Pooling):
    """Average pooling layer for 3D inputs: the average over each window.

    With "same" padding, windows at the border average only the real inputs.

    Inputs are `[batch, depth, height, width, channels]` (or channels second with `channels_first`).

    Args:
        pool_size: Int or tuple of 3 ints, the window size.
        strides: Int or tuple of 3 ints.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name of the layer (`average_pooling3d`, `average_pooling3d_1`, ... if None).
        **kwargs: Further `Layer` arguments.

    Raises:
        ValueError: on an invalid `padding`, `data_format` or size argument;
            when called, on inputs of another rank.
    """

    rank = 3
    _pool = staticmethod(tf.nn.avg_pool)
