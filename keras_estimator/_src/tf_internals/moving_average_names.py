"""`ExponentialMovingAverage.variables_to_restore()` in a model_fn.

Checked on TensorFlow 2.21 (and the same in 2.15).

The moving-average evaluation idiom builds, in its EVAL model_fn,
`tf.compat.v1.train.Saver(ema.variables_to_restore())`: a dict that reads
each trainable variable (and each in `MOVING_AVERAGE_VARIABLES`) from its
average's checkpoint key, and every other global variable from its own
name. TensorFlow's method removes duplicates with a Python `set` of the
graph's global variables; the Estimator's variables are TF2 variables,
which refuse to be hashed, so the call failed with "Variable is
unhashable". Inside `recording()` the method builds the same dict, keeping
variables apart by `ref()`.

Private symbols touched: none. `ExponentialMovingAverage.variables_to_restore`
(public) is replaced only while a graph is inside `recording()`; other
graphs and threads get TensorFlow's method.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import Any

import tensorflow as tf

from keras_estimator._src.tf_internals import GraphScopedReplacement, variable_ops

TOUCHES = (
    "tensorflow.python.training.moving_averages:ExponentialMovingAverage.variables_to_restore",
)


def _moving_average_class() -> Any:
    return tf.compat.v1.train.ExponentialMovingAverage


def _unique(variables: Iterable[Any]) -> list[Any]:
    seen: set[Any] = set()
    unique = []
    for variable in variables:
        if variable.ref() not in seen:
            seen.add(variable.ref())
            unique.append(variable)
    return unique


def _by_ref_in_marked_graphs(original: Any, marks: Callable[[], list[Any]]) -> Any:
    def variables_to_restore(self: Any, moving_avg_variables: Any = None) -> Any:
        if not marks():
            return original(self, moving_avg_variables)
        if moving_avg_variables is None:
            moving_avg_variables = list(tf.compat.v1.trainable_variables()) + list(
                tf.compat.v1.moving_average_variables()
            )
        averaged = _unique(moving_avg_variables)
        name_map = {self.average_name(variable): variable for variable in averaged}
        averaged_names = {variable.name for variable in averaged}
        for variable in _unique(tf.compat.v1.global_variables()):
            if variable.name not in averaged_names:
                # Its default checkpoint key, as 2.15 keyed it: `v.op.name`.
                name_map.setdefault(variable_ops.op_name(variable), variable)
        return name_map

    return variables_to_restore


_REPLACEMENT = GraphScopedReplacement(
    _moving_average_class,
    "variables_to_restore",
    _by_ref_in_marked_graphs,
    "keras_estimator_moving_average_names",
)


def recording() -> contextlib.AbstractContextManager[None]:
    """Within: `variables_to_restore()` works on the current graph's TF2 variables.

    Only in the enclosed graph (and the replica threads that trace into it);
    eagerly nothing changes.
    """
    return _REPLACEMENT.scope()
