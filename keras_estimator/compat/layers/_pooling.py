"""Pooling layers: max and average pooling over 1D and 2D inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator.compat.layers import _common


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
    """The pooling layer `kind` of spatial rank `rank`, reducing with `pool_fn`."""
    _common.require_graph(kind)
    pool_size = _common.int_tuple(pool_size, rank, "pool_size")
    strides = _common.int_tuple(strides, rank, "strides")
    padding = _common.check_padding(padding)
    channels_first = _common.is_channels_first(data_format)
    with _common.layer_scope(name, kind, None):
        x = tf.convert_to_tensor(inputs)
        _common.check_rank(x, rank + 2, kind)
        if channels_first:
            x = _common.to_channels_last(x)
        if rank == 1:
            x = tf.expand_dims(x, 1)
            pool_size, strides = (1, *pool_size), (1, *strides)
        outputs = pool_fn(
            x, ksize=list(pool_size), strides=list(strides), padding=padding.upper()
        )
        if rank == 1:
            outputs = tf.squeeze(outputs, [1])
        if channels_first:
            outputs = _common.to_channels_first(outputs)
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
