"""Layers without variables: `Dropout` / `dropout` and `Flatten` / `flatten`."""

from __future__ import annotations

import functools
import numbers
import operator
from typing import Any

import tensorflow as tf

from keras_estimator._src.v1_layers import common
from keras_estimator._src.v1_layers.base import Layer
from keras_estimator._src.v1_layers.input_spec import InputSpec


class Dropout(Layer):
    """Applies dropout in training; the identity otherwise.

    In training each element is zeroed with probability `rate` and the kept
    ones are scaled by `1 / (1 - rate)`, so the expected sum is unchanged.
    Call it as `layer(inputs, training=...)`.

    Args:
        rate: Fraction of the inputs to drop, in `[0, 1)` (or a tensor).
        noise_shape: 1D shape of the keep/drop mask, broadcast against the
            inputs; None entries take the input's dimension (e.g.
            `[batch, 1, features]` drops the same features at every step).
        seed: Op-level random seed.
        name: Name of the layer (`dropout`, `dropout_1`, ... if None).
        **kwargs: Further `Layer` arguments.

    Raises:
        ValueError: if `rate` is a number outside `[0, 1)`.
    """

    def __init__(
        self,
        rate: Any = 0.5,
        noise_shape: Any = None,
        seed: int | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        if isinstance(rate, numbers.Real) and not 0 <= float(rate) < 1:
            raise ValueError(
                f"`rate` must be in [0, 1), received rate={rate!r}. It is the "
                "fraction of inputs dropped, e.g. 0.5."
            )
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs: Any, training: Any = False) -> tf.Tensor:
        """Dropout when `training` (a bool or a scalar bool tensor) is true."""
        x = tf.convert_to_tensor(inputs)

        def dropped() -> tf.Tensor:
            mask_shape = None
            if self.noise_shape is not None:
                dynamic = tf.shape(x)
                mask_shape = tf.stack(
                    [
                        dynamic[i] if dim is None else tf.constant(dim, tf.int32)
                        for i, dim in enumerate(self.noise_shape)
                    ]
                )
            return tf.nn.dropout(
                x, rate=self.rate, noise_shape=mask_shape, seed=self.seed
            )

        return common.smart_cond(training, dropped, lambda: tf.identity(x))

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(rate=self.rate, noise_shape=self.noise_shape, seed=self.seed)
        return config


class Flatten(Layer):
    """Flattens every dimension but the first (batch) one.

    With `channels_first`, the channels are moved last before flattening, so
    the element order matches a channels-last model.

    Args:
        data_format: "channels_last" (None means it) or "channels_first".
        **kwargs: `Layer` arguments (`name`, ...).

    Raises:
        ValueError: on an invalid `data_format`; when called, on a scalar.
    """

    def __init__(self, data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._channels_first = common.is_channels_first(data_format)
        self.data_format = "channels_first" if self._channels_first else "channels_last"
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs: Any) -> tf.Tensor:
        x = tf.convert_to_tensor(inputs)
        rank = x.shape.rank
        if self._channels_first and rank is not None and rank > 2:
            x = common.to_channels_last(x)
        if rank == 1:
            return tf.expand_dims(x, 1)
        if rank is None:
            return tf.reshape(x, [tf.shape(x)[0], -1])
        non_batch = x.shape[1:]
        if non_batch.is_fully_defined():
            size = functools.reduce(operator.mul, non_batch.as_list(), 1)
            return tf.reshape(x, [-1, size])
        batch = tf.compat.dimension_value(x.shape[0])
        if batch is not None:
            return tf.reshape(x, [batch, -1])
        return tf.reshape(x, [tf.shape(x)[0], -1])

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config.update(data_format=self.data_format)
        return config


def dropout(
    inputs: Any,
    rate: Any = 0.5,
    noise_shape: Any = None,
    seed: int | None = None,
    training: Any = False,
    name: str | None = None,
) -> tf.Tensor:
    """Functional form of `Dropout`: dropout when `training`, else identity.

    Args:
        inputs: Input tensor.
        rate: See `Dropout`.
        noise_shape: See `Dropout`.
        seed: See `Dropout`.
        training: Python bool or scalar bool tensor; dropout applies when it
            is true (a tensor selects at run time with `tf.cond`).
        name: Name scope of the layer (`dropout`, `dropout_1`, ... if None).

    Returns:
        Tensor with the shape and dtype of `inputs`.

    Raises:
        ValueError: if `rate` is a number outside `[0, 1)`.
        RuntimeError: if called eagerly.
    """
    common.require_graph("dropout")
    layer = Dropout(rate, noise_shape=noise_shape, seed=seed, name=name, _scope=name)
    return layer.apply(inputs, training=training)


def flatten(
    inputs: Any, name: str | None = None, data_format: str = "channels_last"
) -> tf.Tensor:
    """Functional form of `Flatten`: keeps the batch dimension only.

    Args:
        inputs: Tensor of rank 1 or more (batch first).
        name: Name scope of the layer (`flatten`, `flatten_1`, ... if None).
        data_format: "channels_last" or "channels_first".

    Returns:
        Tensor of shape `[batch, product of the other dimensions]` (a rank-1
        input becomes `[batch, 1]`).

    Raises:
        ValueError: on an invalid `data_format` or a scalar input.
        RuntimeError: if called eagerly.
    """
    common.require_graph("flatten")
    return Flatten(data_format=data_format, name=name, _scope=name).apply(inputs)
