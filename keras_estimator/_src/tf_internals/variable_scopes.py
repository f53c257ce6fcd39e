"""TF1 variable_scope counters and the variable collections of traced graphs.

Checked on TensorFlow 2.21. TF1's `variable_scope` keeps its `default_name`
counters (which give `dense`, `dense_1` to `tf.compat.v1.layers`-style code)
in a graph collection that TF2 traces share; `fresh_variable_scopes` gives
each trace its own, as each TF1 graph had.

`list_in_variable_store` names a variable made elsewhere in the trace's
`get_variable` store, where 2.15 had it: what `init_from_checkpoint`'s scope
maps (`{"/": "/"}`) go through.

Private symbols touched: the graph-collection keys `__varscope` and
`__variable_store`, `Graph._collections`, `FuncGraph.outer_graph`, and the
store's name -> variable table (`_VariableStore._vars`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

TOUCHES = (
    "tensorflow.python.framework.ops:Graph()._collections",
    "tensorflow.python.framework.ops:Graph.clear_collection",
    "tensorflow.python.framework.func_graph:FuncGraph().outer_graph",
    "tensorflow.python.framework.func_graph:ALLOWLIST_COLLECTIONS",
    "tensorflow.python.ops.variable_scope:_VARSCOPESTORE_KEY",
    "tensorflow.python.ops.variable_scope:_VARSTORE_KEY",
    "tensorflow.python.ops.variable_scope:_get_default_variable_store",
    "tensorflow.python.ops.variable_scope:_VariableStore()._vars",
)

# Graph-collection keys where tf.compat.v1.variable_scope keeps its scope
# counters and get_variable its name -> variable table.
_VARIABLE_SCOPE_KEYS = (("__varscope",), ("__variable_store",))


@contextlib.contextmanager
def fresh_variable_scopes() -> Iterator[None]:
    """Makes `variable_scope(default_name=...)` count from zero, then restores."""
    import tensorflow as tf

    saved = {}
    for key in _VARIABLE_SCOPE_KEYS:
        stores = tf.compat.v1.get_collection_ref(key)
        saved[key] = list(stores)
        del stores[:]
    try:
        yield
    finally:
        for key, content in saved.items():
            tf.compat.v1.get_collection_ref(key)[:] = content


# Collections a TF2 function graph shares *by reference* with the graph it
# is traced from (`func_graph.ALLOWLIST_COLLECTIONS`): the variable lists and
# get_variable's stores. Other collections are copied.
_SHARED_COLLECTION_KEYS = (
    "variables",  # GraphKeys.GLOBAL_VARIABLES
    "local_variables",  # GraphKeys.LOCAL_VARIABLES
    "trainable_variables",  # GraphKeys.TRAINABLE_VARIABLES
    *_VARIABLE_SCOPE_KEYS,
)


def own_variable_collections(graph: Any) -> None:
    """Gives a function graph variable collections of its own, once.

    Checked on TensorFlow 2.21. A `tf.function` traced from eager code gets
    the *same list objects* as TensorFlow's global default graph for the
    variable collections (`FuncGraph.__init__` takes them with
    `get_collection_ref`), so whatever a trace adds to `TRAINABLE_VARIABLES`
    stays in the global graph for the life of the process: every later
    trace, of any Estimator, sees it, and it keeps the variables alive.
    `Graph.clear_collection` deletes the graph's entry (it does not empty the
    list), which unlinks the trace's collection from the outer graph's; the
    trace's next `get_collection_ref` starts a list of its own. Graphs nested
    in a trace (`while_loop` bodies) share the trace's collections dict, so
    unlinking from there unlinks the trace, which is what is wanted.

    Args:
        graph: the graph being traced. Nothing changes for a graph that is
            not a function graph, or whose collections are already its own.
    """
    root = graph
    while getattr(root, "outer_graph", None) is not None:
        root = root.outer_graph
    if root is graph:
        return
    own, shared = graph._collections, root._collections
    for key in _SHARED_COLLECTION_KEYS:
        if key in own and own[key] is shared.get(key):
            graph.clear_collection(key)


def list_in_variable_store(name: str, variable: Any) -> None:
    """Lists `variable` under `name` in the current graph's `get_variable` store.

    2.15 created the global step with `get_variable` before calling the
    model_fn, so the store held it: `init_from_checkpoint` with a map of
    the root scope (`{"/": "/"}`) restored it with the rest, and a second
    `get_variable("global_step")` without `reuse` was refused.
    """
    from tensorflow.python.ops import variable_scope

    variable_scope._get_default_variable_store()._vars.setdefault(name, variable)
