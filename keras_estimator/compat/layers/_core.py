"""Core layers: `dense`, `dropout` and `flatten`."""

from __future__ import annotations

import functools
import numbers
import operator
from typing import Any

import tensorflow as tf

from keras_estimator.compat.layers import _common


def dense(
    inputs: Any,
    units: int,
    activation: Any = None,
    use_bias: bool = True,
    kernel_initializer: Any = None,
    bias_initializer: Any = _common.ZEROS,
    kernel_regularizer: Any = None,
    bias_regularizer: Any = None,
    activity_regularizer: Any = None,
    kernel_constraint: Any = None,
    bias_constraint: Any = None,
    trainable: bool = True,
    name: str | None = None,
    reuse: Any = None,
) -> tf.Tensor:
    """Densely-connected layer: `activation(inputs @ kernel + bias)`.

    Creates `<scope>/kernel` of shape `[inputs.shape[-1], units]` and, with
    `use_bias`, `<scope>/bias` of shape `[units]`, where `<scope>` is `dense`,
    `dense_1`, ... or `name`. Inputs of rank above 2 are contracted on their
    last axis; a rank-2 `tf.SparseTensor` is multiplied sparsely.

    Args:
        inputs: Tensor input (float; other dtypes are cast to float32).
        units: Positive integer, dimensionality of the output space.
        activation: Activation callable (or Keras name such as "relu"); None
            keeps the linear output.
        use_bias: Whether to add a bias.
        kernel_initializer: Initializer for the kernel; None means Glorot
            uniform, as `tf.compat.v1.get_variable` does.
        bias_initializer: Initializer for the bias (zeros).
        kernel_regularizer: Callable taking the kernel and returning a scalar
            loss, added to `GraphKeys.REGULARIZATION_LOSSES`.
        bias_regularizer: Same, for the bias.
        activity_regularizer: Callable taking the output; its value divided by
            the batch size is added to `GraphKeys.REGULARIZATION_LOSSES`.
        kernel_constraint: Projection applied to the kernel by v1 optimizers
            after each update.
        bias_constraint: Same, for the bias.
        trainable: Whether the variables go to `GraphKeys.TRAINABLE_VARIABLES`.
        name: Variable scope name of the layer.
        reuse: True or `tf.compat.v1.AUTO_REUSE` to reuse the variables of a
            previous layer with the same name.

    Returns:
        Output tensor with the shape of `inputs` except the last dimension,
        which is `units`.

    Raises:
        ValueError: if the last dimension of `inputs` is unknown or `units` is
            not positive.
        RuntimeError: if called eagerly.
    """
    _common.require_graph("dense")
    units = int(units)
    if units <= 0:
        raise ValueError(f"`units` must be a positive integer, received units={units}.")
    with _common.layer_scope(name, "dense", reuse):
        x = _dense_inputs(inputs)
        kernel, bias = _common.kernel_and_bias(
            [_last_dimension(x), units],
            units,
            x.dtype,
            use_bias,
            kernel_initializer,
            bias_initializer,
            kernel_regularizer,
            bias_regularizer,
            kernel_constraint,
            bias_constraint,
            trainable,
        )
        outputs = _dense_matmul(x, kernel, units)
        if bias is not None:
            outputs = tf.nn.bias_add(outputs, bias)
        return _common.finish(outputs, activation, activity_regularizer)


def _dense_inputs(inputs: Any) -> Any:
    """`inputs` as a float tensor, or a float `tf.SparseTensor` if sparse."""
    if isinstance(inputs, tf.SparseTensor):
        return inputs if inputs.dtype.is_floating else tf.cast(inputs, tf.float32)
    return _common.as_float_tensor(inputs)


def _last_dimension(x: Any) -> int:
    """The static last dimension of `x`; ValueError if unknown."""
    rank = x.shape.rank
    in_dim = tf.compat.dimension_value(x.shape[-1]) if rank else None
    if in_dim is None:
        raise ValueError(
            "The last dimension of the inputs to `dense` should be defined, "
            f"received inputs with shape {x.shape}."
        )
    return int(in_dim)


def _dense_matmul(x: Any, kernel: tf.Variable, units: int) -> tf.Tensor:
    """`x @ kernel`, contracting the last axis of `x` (sparse if `x` is)."""
    if isinstance(x, tf.SparseTensor):
        return tf.sparse.sparse_dense_matmul(x, kernel)
    rank = x.shape.rank
    if rank == 2:
        return tf.matmul(x, kernel)
    outputs = tf.tensordot(x, kernel, [[rank - 1], [0]])
    outputs.set_shape(x.shape[:-1].concatenate([units]))
    return outputs


def dropout(
    inputs: Any,
    rate: Any = 0.5,
    noise_shape: Any = None,
    seed: int | None = None,
    training: Any = False,
    name: str | None = None,
) -> tf.Tensor:
    """Applies dropout in training; the identity otherwise.

    In training each element is zeroed with probability `rate` and the kept
    ones are scaled by `1 / (1 - rate)`, so the expected sum is unchanged.

    Args:
        inputs: Input tensor.
        rate: Fraction of the inputs to drop, in `[0, 1)`.
        noise_shape: 1D shape of the keep/drop mask, broadcast against the
            inputs; None entries take the input's dimension (e.g.
            `[batch, 1, features]` drops the same features at every step).
        seed: Op-level random seed.
        training: Python bool or scalar bool tensor; dropout applies when it
            is true (a tensor selects at run time with `tf.cond`).
        name: Name scope of the layer (`dropout`, `dropout_1`, ...
            if None).

    Returns:
        Tensor with the shape and dtype of `inputs`.

    Raises:
        ValueError: if `rate` is a number outside `[0, 1)`.
        RuntimeError: if called eagerly.
    """
    _common.require_graph("dropout")
    if isinstance(rate, numbers.Real) and not 0 <= float(rate) < 1:
        raise ValueError(f"`rate` must be in [0, 1), received rate={rate!r}.")
    with _common.layer_scope(name, "dropout", None):
        x = tf.convert_to_tensor(inputs)

        def dropped() -> tf.Tensor:
            mask_shape = None
            if noise_shape is not None:
                dynamic = tf.shape(x)
                mask_shape = tf.stack(
                    [
                        dynamic[i] if dim is None else tf.constant(dim, tf.int32)
                        for i, dim in enumerate(noise_shape)
                    ]
                )
            return tf.nn.dropout(x, rate=rate, noise_shape=mask_shape, seed=seed)

        return _common.smart_cond(training, dropped, lambda: tf.identity(x))


def flatten(
    inputs: Any, name: str | None = None, data_format: str = "channels_last"
) -> tf.Tensor:
    """Flattens every dimension but the first (batch) one.

    With `channels_first`, the channels are moved last before flattening, so
    the element order matches a channels-last model.

    Args:
        inputs: Tensor of rank 1 or more (batch first).
        name: Name scope of the layer (`flatten`, `flatten_1`, ...
            if None).
        data_format: "channels_last" or "channels_first".

    Returns:
        Tensor of shape `[batch, product of the other dimensions]` (a rank-1
        input becomes `[batch, 1]`).

    Raises:
        ValueError: on an invalid `data_format` or a scalar input.
        RuntimeError: if called eagerly.
    """
    _common.require_graph("flatten")
    channels_first = _common.is_channels_first(data_format)
    with _common.layer_scope(name, "flatten", None):
        x = tf.convert_to_tensor(inputs)
        rank = x.shape.rank
        if rank == 0:
            raise ValueError("`flatten` needs inputs with a batch dimension.")
        if channels_first and rank is not None and rank > 2:
            x = _common.to_channels_last(x)
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
