"""A `tf.compat.v1.train.Saver` made in a model_fn: its settings, not its ops.

Checked on TensorFlow 2.21 (and the same in 2.15).

A TF1 model_fn hands the Estimator a Saver through its Scaffold
(`Scaffold(saver=tf.compat.v1.train.Saver(max_to_keep=3))`, or, to evaluate
with moving averages, `Saver(ema.variables_to_restore())`). tf.estimator
2.15 saved and restored model_dir's checkpoints with it: its `max_to_keep`
and `keep_checkpoint_every_n_hours` set the retention in place of
RunConfig's, and its `var_list` named the checkpoint key each variable is
read from. A Saver builds its save and restore ops when it is made; built
into a traced step they would run at every step. Inside `recording()` a
Saver made in the enclosed graph builds nothing: `Saver.build` only fills
in the variables a Saver without a `var_list` saves (the Estimator's, as
the graph lists them), and `settings()` reads what the Saver was given.
Such a Saver's `restore(session, path)`, called eagerly (from a Scaffold's
`init_fn`), is TensorFlow's eager restore, which assigns those variables.

Private symbols touched: `Saver.build` (public, replaced only while a graph
is inside `recording()`; other graphs and threads get TensorFlow's method),
`variables._all_saveable_objects` (what a Saver without a var_list saves),
and the constructor's arguments as the Saver keeps them: `_var_list`,
`_max_to_keep`, `_keep_checkpoint_every_n_hours`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
from collections.abc import Callable, Mapping
from typing import Any

import tensorflow as tf

from keras_estimator._src.tf_internals import GraphScopedReplacement

TOUCHES = (
    "tensorflow.python.training.saver:Saver.build",
    "tensorflow.python.ops.variables:_all_saveable_objects",
    "tensorflow.python.training.saver:Saver()._var_list",
    "tensorflow.python.training.saver:Saver()._max_to_keep",
    "tensorflow.python.training.saver:Saver()._keep_checkpoint_every_n_hours",
)


@dataclasses.dataclass(frozen=True)
class SaverSettings:
    """What a model_fn's Saver says about model_dir's checkpoints.

    Attributes:
        keys: variable name -> the checkpoint key the Saver reads and writes
            it under, for the variables its `var_list` named (None: every
            variable, under its own name).
        max_to_keep: newest checkpoints kept (None or 0: all).
        keep_checkpoint_every_n_hours: one more checkpoint kept per period.
    """

    keys: Mapping[str, str] | None
    max_to_keep: int | None
    keep_checkpoint_every_n_hours: float

    def renamed(self) -> dict[str, str]:
        """Variable name -> checkpoint key, where the two differ."""
        return {name: key for name, key in (self.keys or {}).items() if name != key}


def _saver_class() -> Any:
    return tf.compat.v1.train.Saver


def _variables_module() -> Any:
    return importlib.import_module("tensorflow.python.ops.variables")


def _unbuilt_in_marked_graphs(original: Any, marks: Callable[[], list[Any]]) -> Any:
    def build(self: Any) -> Any:
        if not marks():
            return original(self)
        if self._var_list is None:
            # What the Saver would have saved: the graph's variables (here
            # the Estimator's own, which a later eager `restore()` assigns).
            self._var_list = _variables_module()._all_saveable_objects() or None
        return None

    return build


_REPLACEMENT = GraphScopedReplacement(
    _saver_class, "build", _unbuilt_in_marked_graphs, "keras_estimator_v1_savers"
)


def recording() -> contextlib.AbstractContextManager[None]:
    """Within: a Saver made in the current graph builds no ops.

    Only in the enclosed graph (and the replica threads that trace into it);
    eagerly nothing changes.
    """
    return _REPLACEMENT.scope()


def is_v1_saver(saver: Any) -> bool:
    return isinstance(saver, _saver_class())


def settings(saver: Any) -> SaverSettings:
    """The retention and checkpoint keys a TF1 Saver was made with.

    Raises:
        ValueError: its var_list holds something other than variables (a
            partitioned variable, a SaveableObject).
    """
    var_list = saver._var_list
    keys: dict[str, str] | None = None
    if var_list is not None:
        if isinstance(var_list, Mapping):
            pairs = [(str(key), value) for key, value in var_list.items()]
        else:
            pairs = [(_variable_name(value), value) for value in var_list]
        keys = {_variable_name(value): key for key, value in pairs}
    return SaverSettings(
        keys=keys,
        max_to_keep=saver._max_to_keep,
        keep_checkpoint_every_n_hours=float(saver._keep_checkpoint_every_n_hours),
    )


def _variable_name(value: Any) -> str:
    name = getattr(value, "name", None)
    if not isinstance(value, tf.Variable) or not isinstance(name, str):
        raise ValueError(
            f"The Scaffold's tf.compat.v1.train.Saver lists {value!r} in its "
            "var_list; only variables are supported there (a partitioned "
            "variable or a SaveableObject is not). List the variables "
            "themselves, by name or in a dict of checkpoint key -> variable."
        )
    return name.split(":")[0]
