"""`InputSpec` and the check a layer runs on its inputs before each call.

`InputSpec` is Keras' own class (TF 2.15's `tf.compat.v1.layers.InputSpec`
was Keras' too, with the same arguments); the check is this package's, since
Keras keeps its own private.
"""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf

InputSpec: Any = keras.layers.InputSpec


def check_inputs(specs: Any, inputs: Any, layer_name: str) -> None:
    """Raises ValueError when `inputs` do not meet `specs` (None: no check).

    Args:
        specs: An `InputSpec`, a list of them (one per input), or None.
        inputs: The tensor, or the structure of tensors, given to the layer.
        layer_name: Named in the error.
    """
    if specs is None:
        return
    spec_list = list(specs) if isinstance(specs, (list, tuple)) else [specs]
    input_list = tf.nest.flatten(inputs)
    if len(spec_list) != len(input_list):
        raise ValueError(
            f"Layer {layer_name} expects {len(spec_list)} input(s), received "
            f"{len(input_list)}. Pass one tensor per InputSpec."
        )
    for index, (spec, tensor) in enumerate(zip(spec_list, input_list, strict=True)):
        if spec is not None:
            _check_one(spec, tf.TensorShape(tensor.shape), index, layer_name)


def _check_one(spec: Any, shape: tf.TensorShape, index: int, layer_name: str) -> None:
    """Checks the rank, the fixed axes and the shape of one input."""
    where = f"Input {index} of layer {layer_name}"
    rank = shape.rank
    if spec.ndim is not None and rank != spec.ndim:
        raise ValueError(
            f"{where} expects inputs of rank {spec.ndim}, received inputs with "
            f"shape {shape}. Reshape the inputs to rank {spec.ndim}."
        )
    if spec.min_ndim is not None and rank is not None and rank < spec.min_ndim:
        raise ValueError(
            f"{where} expects inputs of rank {spec.min_ndim} or more, received "
            f"inputs with shape {shape}."
        )
    if spec.max_ndim is not None and rank is not None and rank > spec.max_ndim:
        raise ValueError(
            f"{where} expects inputs of rank {spec.max_ndim} or less, received "
            f"inputs with shape {shape}."
        )
    if rank is None:
        return
    for axis, size in (spec.axes or {}).items():
        actual = tf.compat.dimension_value(shape[int(axis)])
        if size is not None and actual not in (None, size):
            raise ValueError(
                f"{where} expects axis {axis} of its inputs to have size {size} "
                f"(the size the layer was built for), received inputs with "
                f"shape {shape}. Use a new layer for inputs of another size."
            )
    if spec.shape is not None:
        expected = tf.TensorShape(spec.shape)
        if not expected.is_compatible_with(shape):
            raise ValueError(
                f"{where} expects inputs of shape {expected}, received inputs "
                f"with shape {shape}."
            )
