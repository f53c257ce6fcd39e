"""Functional pooling: `max_pooling1d`/`2d`/`3d`, `average_pooling1d`/`2d`/`3d`."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from keras_estimator._src.v1_layers import common
from keras_estimator._src.v1_layers import pooling as _pooling


def max_pooling1d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> tf.Tensor:
    """Functional form of `MaxPooling1D`: the max over each window.

    Args:
        inputs: Rank-3 tensor, `[batch, length, channels]` (or `[batch, channels, length]` with `channels_first`).
        pool_size: Int or tuple of 1 int, the window size.
        strides: Int or tuple of 1 int.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name scope of the layer (`max_pooling1d`, `max_pooling1d_1`, ... if None).

    Returns:
        Output tensor of rank 3 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank.
        RuntimeError: if called eagerly.
    """
    common.require_graph("max_pooling1d")
    layer = _pooling.MaxPooling1D(
        pool_size, strides, padding, data_format, name=name, _scope=name
    )
    return layer.apply(inputs)


def max_pooling2d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> tf.Tensor:
    """Functional form of `MaxPooling2D`: the max over each window.

    Args:
        inputs: Rank-4 tensor, `[batch, height, width, channels]` (or `[batch, channels, height, width]` with `channels_first`).
        pool_size: Int or tuple of 2 ints, the window size.
        strides: Int or tuple of 2 ints.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name scope of the layer (`max_pooling2d`, `max_pooling2d_1`, ... if None).

    Returns:
        Output tensor of rank 4 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank.
        RuntimeError: if called eagerly.
    """
    common.require_graph("max_pooling2d")
    layer = _pooling.MaxPooling2D(
        pool_size, strides, padding, data_format, name=name, _scope=name
    )
    return layer.apply(inputs)


def max_pooling3d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> tf.Tensor:
    """Functional form of `MaxPooling3D`: the max over each window.

    Args:
        inputs: Rank-5 tensor, `[batch, depth, height, width, channels]` (or channels second with `channels_first`).
        pool_size: Int or tuple of 3 ints, the window size.
        strides: Int or tuple of 3 ints.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name scope of the layer (`max_pooling3d`, `max_pooling3d_1`, ... if None).

    Returns:
        Output tensor of rank 5 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank.
        RuntimeError: if called eagerly.
    """
    common.require_graph("max_pooling3d")
    layer = _pooling.MaxPooling3D(
        pool_size, strides, padding, data_format, name=name, _scope=name
    )
    return layer.apply(inputs)


def average_pooling1d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> tf.Tensor:
    """Functional form of `AveragePooling1D`: the average over each window.

    Args:
        inputs: Rank-3 tensor, `[batch, length, channels]` (or `[batch, channels, length]` with `channels_first`).
        pool_size: Int or tuple of 1 int, the window size.
        strides: Int or tuple of 1 int.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name scope of the layer (`average_pooling1d`, `average_pooling1d_1`, ... if None).

    Returns:
        Output tensor of rank 3 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank.
        RuntimeError: if called eagerly.
    """
    common.require_graph("average_pooling1d")
    layer = _pooling.AveragePooling1D(
        pool_size, strides, padding, data_format, name=name, _scope=name
    )
    return layer.apply(inputs)


def average_pooling2d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> tf.Tensor:
    """Functional form of `AveragePooling2D`: the average over each window.

    Args:
        inputs: Rank-4 tensor, `[batch, height, width, channels]` (or `[batch, channels, height, width]` with `channels_first`).
        pool_size: Int or tuple of 2 ints, the window size.
        strides: Int or tuple of 2 ints.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name scope of the layer (`average_pooling2d`, `average_pooling2d_1`, ... if None).

    Returns:
        Output tensor of rank 4 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank.
        RuntimeError: if called eagerly.
    """
    common.require_graph("average_pooling2d")
    layer = _pooling.AveragePooling2D(
        pool_size, strides, padding, data_format, name=name, _scope=name
    )
    return layer.apply(inputs)


def average_pooling3d(
    inputs: Any,
    pool_size: Any,
    strides: Any,
    padding: str = "valid",
    data_format: str = "channels_last",
    name: str | None = None,
) -> tf.Tensor:
    """Functional form of `AveragePooling3D`: the average over each window.

    Args:
        inputs: Rank-5 tensor, `[batch, depth, height, width, channels]` (or channels second with `channels_first`).
        pool_size: Int or tuple of 3 ints, the window size.
        strides: Int or tuple of 3 ints.
        padding: "valid" or "same" (case-insensitive).
        data_format: "channels_last" or "channels_first".
        name: Name scope of the layer (`average_pooling3d`, `average_pooling3d_1`, ... if None).

    Returns:
        Output tensor of rank 5 in the same data format.

    Raises:
        ValueError: on an invalid `padding`, `data_format`, size argument or
            input rank.
        RuntimeError: if called eagerly.
    """
    common.require_graph("average_pooling3d")
    layer = _pooling.AveragePooling3D(
        pool_size, strides, padding, data_format, name=name, _scope=name
    )
    return layer.apply(inputs)
