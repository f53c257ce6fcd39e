"""A TF1 Scaffold's initialization ops, built in a model_fn.

Checked on TensorFlow 2.21 (and the same in 2.15).

TF1 model_fns give their Scaffold the ops tf.estimator's session ran to set
up: `init_op=tf.compat.v1.global_variables_initializer()`,
`local_init_op=tf.group(tf.compat.v1.local_variables_initializer(),
tf.compat.v1.tables_initializer())`, `ready_op=
tf.compat.v1.report_uninitialized_variables()`. Here the Estimator's
variables are TF2 variables, made and initialized before any trace, and have
no initializer op: TensorFlow's `variables_initializer` groups their
`initializer`s, meets None and fails, and `report_uninitialized_variables`
reads a `.op` they do not have. Eagerly TensorFlow returns a no-op for the
initializers; inside `recording()` the model_fn's graph gets the same (an op
noted here as one that initializes variables) and an empty report: every
variable is initialized.

Private symbols touched: `variables.variables_initializer`, which
`global_variables_initializer()` and `local_variables_initializer()` call
through their module, and `variables.report_uninitialized_variables`; the
same functions are replaced in every public namespace module holding them
(`tf.compat.v1` and its copies, see `api_modules`). Each only while a graph
is inside `recording()`; other graphs and threads get TensorFlow's
functions.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

from keras_estimator._src.tf_internals import GraphScopedReplacement, api_modules

TOUCHES = (
    "tensorflow.python.ops.variables:variables_initializer",
    "tensorflow.python.ops.variables:report_uninitialized_variables",
)

# Graph collection of the ops `variables_initializer` made in marked graphs.
_INITIALIZER_OPS = "keras_estimator_variable_initializer_ops"
# Ops that initialize a TF1 lookup table (what `tables_initializer()` groups).
_TABLE_INITIALIZER_TYPES = frozenset(
    {"InitializeTableV2", "InitializeTableFromTextFileV2", "LookupTableImportV2"}
)


def _variables_module() -> Any:
    return importlib.import_module("tensorflow.python.ops.variables")


def _initialized_in_marked_graphs(original: Any, marks: Callable[[], list[Any]]) -> Any:
    def variables_initializer(var_list: Any, name: str = "init") -> Any:
        if not marks() or any(
            getattr(variable, "initializer", None) is not None for variable in var_list or ()
        ):
            return original(var_list, name=name)
        return stand_in(name)

    return variables_initializer


def stand_in(name: str) -> Any:
    """A no-op, in the graph being built, that stands for variables' initializers."""
    op = tf.no_op(name=name)
    tf.compat.v1.add_to_collection(_INITIALIZER_OPS, op)
    return op


def _reported_in_marked_graphs(original: Any, marks: Callable[[], list[Any]]) -> Any:
    def report_uninitialized_variables(
        var_list: Any = None, name: str = "report_uninitialized_variables"
    ) -> Any:
        if not marks():
            return original(var_list, name=name)
        return tf.constant([], dtype=tf.string, name=name)

    return report_uninitialized_variables


_COLLECTION = "keras_estimator_variable_initializers"
_MAKERS = {
    "variables_initializer": _initialized_in_marked_graphs,
    "report_uninitialized_variables": _reported_in_marked_graphs,
}
_replacements: list[GraphScopedReplacement] = []
_lock = threading.Lock()


def _owner(module: Any) -> Callable[[], Any]:
    return lambda: module


def _all_replacements() -> list[GraphScopedReplacement]:
    """One replacement per module holding each function: `variables` and each
    module object serving `tf.compat.v1` (`api_modules.namespaces`), which a
    program may call through."""
    with _lock:
        if not _replacements:
            variables = _variables_module()
            v1_namespaces, _ = api_modules.namespaces()
            for attribute, make in _MAKERS.items():
                original = getattr(variables, attribute)
                owners = [variables] + [
                    module
                    for module in v1_namespaces
                    if getattr(module, attribute, None) is original
                ]
                _replacements.extend(
                    GraphScopedReplacement(_owner(module), attribute, make, _COLLECTION)
                    for module in owners
                )
        return _replacements


@contextlib.contextmanager
def recording() -> Iterator[None]:
    """Within: variables' initializer ops and readiness reports build in the current graph.

    Only in the enclosed graph (and the replica threads that trace into it);
    eagerly nothing changes.
    """
    with contextlib.ExitStack() as stack:
        for replacement in _all_replacements():
            stack.enter_context(replacement.scope())
        yield


def only_initializes(op: Any) -> bool:
    """Whether running `op` would only initialize variables and lookup tables.

    So an op made by `variables_initializer` in a marked graph (through
    `global_variables_initializer()` or `local_variables_initializer()`),
    one `tables_initializer()` makes, or a group of those: what the
    Estimator does itself before the first step.
    """
    graph = getattr(op, "graph", None)
    if graph is None:
        return False
    noted = {id(made) for made in graph.get_collection(_INITIALIZER_OPS)}
    pending = [op.op if isinstance(op, tf.Tensor) else op]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in seen or id(current) in noted:
            continue
        seen.add(id(current))
        if current.type in _TABLE_INITIALIZER_TYPES:
            continue
        if current.type != "NoOp" or current.inputs:
            return False
        pending.extend(current.control_inputs)
    return True
