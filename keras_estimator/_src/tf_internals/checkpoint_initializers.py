"""`init_from_checkpoint` in a model_fn: recorded, not built into the step.

Checked on TensorFlow 2.21 (and the same in 2.15).

`tf.compat.v1.train.init_from_checkpoint(ckpt, assignment_map)` resolves
its map against the variables the model_fn made (TensorFlow's own code, with
its errors for a missing tensor or a bad scope map) and then, for each
variable, replaces the variable's initializer with a restore from the
checkpoint. A TF1 session ran that initializer once, on a fresh start only:
a checkpoint in model_dir won over it. Built into a traced training step the
restore would run at every step and undo the training. Inside `recording()`
the last part, the one function that builds the restore
(`checkpoint_utils._set_checkpoint_initializer`), records what it was asked
for instead: the variable's name, the checkpoint file, the tensor's name in
it and its slice. The Estimator restores those when it initializes the
variables (`restore_recorded`), where 2.15's initializers ran.

Private symbols touched: `tensorflow.python.training.checkpoint_utils._set_checkpoint_initializer`,
replaced only while a graph is inside `recording()`; other graphs and
threads get TensorFlow's function.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import tensorflow as tf

from keras_estimator._src.tf_internals import GraphScopedReplacement

TOUCHES = ("tensorflow.python.training.checkpoint_utils:_set_checkpoint_initializer",)


class CheckpointInitializer(NamedTuple):
    """Where a variable's first value comes from."""

    checkpoint: str
    tensor_name: str
    slice_spec: str


def _module() -> Any:
    return importlib.import_module("tensorflow.python.training.checkpoint_utils")


def _recording_in_marked_graphs(original: Any, marks: Callable[[], list[Any]]) -> Any:
    def set_checkpoint_initializer(
        variable: Any,
        ckpt_file: str,
        tensor_name: str,
        slice_spec: str,
        name: str = "checkpoint_initializer",
    ) -> Any:
        records = marks()
        if not records:
            return original(variable, ckpt_file, tensor_name, slice_spec, name)
        _check_shape(variable, ckpt_file, tensor_name, slice_spec)
        records[-1][variable.name.split(":")[0]] = CheckpointInitializer(
            ckpt_file, tensor_name, slice_spec
        )
        return None

    return set_checkpoint_initializer


# A graph holding a dict in this collection records into it.
_REPLACEMENT = GraphScopedReplacement(
    _module,
    "_set_checkpoint_initializer",
    _recording_in_marked_graphs,
    "keras_estimator_checkpoint_initializers",
)


def _check_shape(variable: Any, ckpt_file: str, tensor_name: str, slice_spec: str) -> None:
    """2.15's error for a variable whose shape is not the checkpoint's.

    TensorFlow checks it before this point only for the variable types it
    knows; a model_fn's variables here are stand-ins it does not.
    """
    if slice_spec:
        return  # one part of a partitioned variable: its slice is checked on restore
    shapes = tf.train.load_checkpoint(ckpt_file).get_variable_to_shape_map()
    shape = tf.TensorShape(shapes.get(tensor_name))
    if not tf.TensorShape(variable.shape).is_compatible_with(shape):
        raise ValueError(
            f"Shape of variable {variable.name} ({variable.shape}) doesn't match with "
            f"shape of tensor {tensor_name} ({shape.as_list()}) from checkpoint reader. "
            f"Map {tensor_name!r} of checkpoint {ckpt_file!r} to a variable of that "
            "shape in init_from_checkpoint's assignment_map, or leave it out."
        )


def recording(into: dict[str, CheckpointInitializer]) -> contextlib.AbstractContextManager[None]:
    """Records, into `into`, what `init_from_checkpoint` calls ask meanwhile.

    Only in the enclosed graph (and the replica threads that trace into
    it); eagerly nothing changes.
    """
    return _REPLACEMENT.scope(into)


def restore_recorded(
    initializers: Mapping[str, CheckpointInitializer], variables: Mapping[str, tf.Variable]
) -> None:
    """Assigns each of `variables` named in `initializers` its recorded value.

    Every value is read before any variable is assigned, so a checkpoint
    that cannot be read changes nothing.
    """
    values = {}
    for name, source in initializers.items():
        variable = variables.get(name)
        if variable is None:
            continue
        (values[name],) = tf.raw_ops.RestoreV2(
            prefix=source.checkpoint,
            tensor_names=[source.tensor_name],
            shape_and_slices=[source.slice_spec],
            dtypes=[variable.dtype.base_dtype],
        )
    for name, value in values.items():
        variables[name].assign(value)
