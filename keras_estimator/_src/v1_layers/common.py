"""Helpers shared by every layer: argument checks, scopes, variables, outputs.

A layer class (see `base.Layer`) validates its arguments with the
`check_*`/`int_tuple` helpers when constructed; on its first call it opens its
TF1 variable scope with `layer_scope` and creates its variables with
`add_variable`; `activate` applies its activation.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import keras
import numpy as np
import tensorflow as tf

GraphKeys = tf.compat.v1.GraphKeys
# Names of the variables this package has handed out in the current function
# trace (a per-trace collection; strings, so a MetaGraph can hold them).
SEEN_IN_TRACE_COLLECTION = "keras_estimator_compat_layers_variables"
# Default initializers, shared by the layers' signatures as in TF1.
ZEROS = tf.compat.v1.zeros_initializer()
ONES = tf.compat.v1.ones_initializer()


# ---- graph and scope ---------------------------------------------------------
def require_graph(function_name: str) -> None:
    """Raises RuntimeError when `function_name` is called eagerly."""
    if tf.executing_eagerly():
        raise RuntimeError(
            f"keras_estimator.compat.layers.{function_name} was called eagerly. "
            "Like tf.compat.v1.layers it creates TF1 variables with "
            "tf.compat.v1.get_variable and must be called while a graph is "
            "built: inside a model_fn, a tf.function, or a "
            "`with tf.Graph().as_default():` block."
        )


def layer_scope(name: str | None, kind: str, reuse: Any) -> Any:
    """The variable scope TF1's `tf.compat.v1.layers` opened for a layer.

    A given `name` is used as is (a second layer with the same name and no
    `reuse` fails in `get_variable`, as in TF1). Without a name, the layer
    kind is made unique per graph (`dense`, `dense_1`, ...), except with
    `reuse`, which reuses the variables of the first unnamed layer (`dense`).
    """
    reuse = reuse or None
    if name:
        return tf.compat.v1.variable_scope(name, reuse=reuse)
    if reuse:
        return tf.compat.v1.variable_scope(kind, reuse=reuse)
    return tf.compat.v1.variable_scope(None, default_name=kind)


# ---- argument normalisation --------------------------------------------------
def as_float_tensor(inputs: Any) -> tf.Tensor:
    """`inputs` as a tensor, cast to float32 unless already floating."""
    tensor = tf.convert_to_tensor(inputs)
    if not tensor.dtype.is_floating:
        tensor = tf.cast(tensor, tf.float32)
    return tensor


def keras_object(getter: Callable[[Any], Any], value: Any) -> Any:
    """Resolves a string or config dict (e.g. "relu") like TF1's Keras layers."""
    if isinstance(value, (str, dict)):
        return getter(value)
    return value


def int_tuple(value: Any, n: int, argument: str) -> tuple[int, ...]:
    """`value` (a positive int or `n` of them) as a tuple of `n` ints."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        result: tuple[int, ...] = (int(value),) * n
    else:
        try:
            result = tuple(int(v) for v in value)
        except (TypeError, ValueError):
            result = ()
    if len(result) != n or min(result) <= 0:
        raise ValueError(
            f"`{argument}` must be a positive int or a tuple of {n} positive "
            f"ints, received {argument}={value!r}."
        )
    return result


def positive_int(value: Any, argument: str) -> int:
    """`value` as a positive int (`units`, `filters`, ...)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, float)):
        raise TypeError(
            f"`{argument}` must be a positive integer, received "
            f"{argument}={value!r} of type {type(value).__name__}."
        )
    if int(value) != value or value <= 0:
        raise ValueError(
            f"`{argument}` must be a positive integer, received {argument}={value!r}."
        )
    return int(value)


def check_padding(padding: Any, allowed: Sequence[str] = ("valid", "same")) -> str:
    """`padding` lower-cased, if it is one of `allowed` (case-insensitive)."""
    normalized = padding.lower() if isinstance(padding, str) else ""
    if normalized not in allowed:
        choices = " or ".join(repr(p) for p in allowed)
        raise ValueError(
            f"`padding` must be one of {choices} (case-insensitive), "
            f"received padding={padding!r}."
        )
    return normalized


def is_channels_first(data_format: Any) -> bool:
    """Whether `data_format` is "channels_first" (None means channels-last)."""
    if data_format is None:
        return False
    normalized = data_format.lower() if isinstance(data_format, str) else None
    if normalized not in ("channels_last", "channels_first"):
        raise ValueError(
            "`data_format` must be 'channels_last' or 'channels_first', "
            f"received data_format={data_format!r}."
        )
    return normalized == "channels_first"


def static_bool(value: Any) -> bool | None:
    """`value` as a Python bool when known while building, else None."""
    if value is None:
        return False
    if isinstance(value, (bool, np.bool_, numbers.Integral)):
        return bool(value)
    static = tf.get_static_value(tf.convert_to_tensor(value))
    return None if static is None else bool(static)


# ---- tensor helpers ----------------------------------------------------------
def to_channels_last(x: tf.Tensor) -> tf.Tensor:
    """Moves axis 1 (channels) of `x` last."""
    rank = x.shape.rank
    return tf.transpose(x, [0, *range(2, rank), 1])


def to_channels_first(x: tf.Tensor) -> tf.Tensor:
    """Moves the last axis (channels) of `x` to axis 1."""
    rank = x.shape.rank
    return tf.transpose(x, [0, rank - 1, *range(1, rank - 1)])


def smart_cond(
    pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any]
) -> Any:
    """`true_fn()` or `false_fn()` when `pred` is known, else a `tf.cond`."""
    static = static_bool(pred)
    if static is not None:
        return true_fn() if static else false_fn()
    return tf.cond(tf.cast(pred, tf.bool), true_fn, false_fn)


# ---- variables ---------------------------------------------------------------
def _is_new_variable(
    variable: tf.Variable, graph: tf.Graph, existing: set[int]
) -> bool:
    """Whether `variable` was just created, for its regularization loss.

    As in TF1, a variable adds its regularization loss when it is created,
    not when it is reused. A TF2 trace shares GLOBAL_VARIABLES with the
    outer graph (so variables from an earlier trace are already there) but
    has its own copy of other collections: there, "created" means first
    obtained through this package in this trace.
    """
    if graph.building_function:
        seen = tf.compat.v1.get_collection_ref(SEEN_IN_TRACE_COLLECTION)
        is_new = variable.name not in seen
        if is_new:
            seen.append(variable.name)
        return is_new
    return id(variable) not in existing


def add_variable(
    name: str,
    shape: Sequence[int],
    dtype: tf.DType,
    initializer: Any,
    regularizer: Any = None,
    constraint: Any = None,
    trainable: bool = True,
    losses: list[tf.Tensor] | None = None,
    **kwargs: Any,
) -> tf.Variable:
    """Gets or creates `name` in the current variable scope, as TF1 layers did.

    A regularization loss made for a new variable goes to the graph's
    `REGULARIZATION_LOSSES` and, when given, to `losses` (the layer's own).
    """
    regularizer = keras_object(keras.regularizers.get, regularizer)
    graph = tf.compat.v1.get_default_graph()
    existing: set[int] = set()
    if regularizer is not None and not graph.building_function:
        existing = {id(v) for v in tf.compat.v1.global_variables()}
    variable = tf.compat.v1.get_variable(
        name,
        shape=list(shape),
        dtype=dtype,
        initializer=keras_object(keras.initializers.get, initializer),
        trainable=trainable,
        constraint=keras_object(keras.constraints.get, constraint),
        **kwargs,
    )
    is_new = _is_new_variable(variable, graph, existing)
    if regularizer is not None and is_new:
        with tf.name_scope(f"{name}/Regularizer"):
            loss = regularizer(variable)
        if loss is not None:
            tf.compat.v1.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
            if losses is not None:
                losses.append(loss)
    return variable


# ---- outputs -----------------------------------------------------------------
def activate(outputs: tf.Tensor, activation: Any) -> tf.Tensor:
    """`activation(outputs)`, or `outputs` when `activation` is None."""
    activation = keras_object(keras.activations.get, activation)
    return outputs if activation is None else activation(outputs)
