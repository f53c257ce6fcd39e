"""One trace with `tf.function`'s ordering that can be cut into several functions.

Checked on TensorFlow 2.21.

Private symbols touched: `func_graph.func_graph_from_py_func` (its
`add_control_dependencies` argument), `wrap_function.WrappedFunction` (its
constructor and `prune`) and `wrap_function.VariableHolder`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

TOUCHES = (
    "tensorflow.python.framework.func_graph:func_graph_from_py_func",
    "tensorflow.python.eager.wrap_function:WrappedFunction.prune",
    "tensorflow.python.eager.wrap_function:VariableHolder",
)


def trace_ordered(fn: Callable[..., Any], signature: list[Any], name: str) -> Any:
    """Traces `fn(*signature)` once, as `tf.function` would; runs nothing.

    Checked on TensorFlow 2.21. The graph gets automatic control
    dependencies (stateful ops ordered as traced, and listed in
    `graph.control_outputs` as the ops that must run), as a `tf.function`
    trace does, but the result is a `WrappedFunction`, whose `prune(feeds,
    fetches)` copies out the part of the graph that given fetches need: one
    trace then serves functions with different outputs. `tf.compat.v1.wrap_function`
    makes the same object without the ordering; no public API makes it with.
    Unlike `tf.function`, nothing here intercepts variable creation, so
    variables made under `tf.init_scope` during the trace are plain eager ones.
    """
    from tensorflow.python.eager import wrap_function
    from tensorflow.python.framework import func_graph

    holder = wrap_function.VariableHolder(fn)
    graph = func_graph.func_graph_from_py_func(
        name,
        holder,
        args=None,
        kwargs=None,
        signature=signature,
        add_control_dependencies=True,
        collections={},
    )
    return wrap_function.WrappedFunction(graph, variable_holder=holder, signature=signature)


def op_alone(op: Any) -> Callable[[], Any]:
    """A function running `op` of a traced graph, and what it needs, alone.

    Raises one of `pruning.PRUNE_ERRORS` when `op` needs the graph's inputs.
    """
    return fetches_alone(op.graph, [op], [])


def fetches_alone(
    graph: Any, fetches: Any, feeds: Any, data_only: bool = False
) -> Callable[..., Any]:
    """A function running `fetches` of a traced `graph`, and what they need, alone.

    Checked on TensorFlow 2.21. The part of `graph` that `fetches` need is
    copied out (as `prune` does for a wrapped function's own fetches), with
    the graph's captures, the variables, as captures of the copy: calling it
    runs the fetches on the variables themselves. It takes the values of
    `feeds` (tensors of `graph`, placeholders among them), in order, and
    returns `fetches`' structure (None for an operation); with `data_only`,
    as `pruning.prune`, the trace's ordering of its stateful ops is left
    out. Raises one of
    `pruning.PRUNE_ERRORS` when the fetches need another of the graph's
    inputs.
    """
    from tensorflow.python.eager import wrap_function

    from keras_estimator._src.tf_internals import pruning

    wrapped = wrap_function.WrappedFunction(
        graph, variable_holder=wrap_function.VariableHolder(share_variables=True)
    )
    return pruning.prune(wrapped, feeds, fetches, data_only)
