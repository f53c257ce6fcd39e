"""A graph that TF1 lookups see while operations still run eagerly.

Checked on TensorFlow 2.21. A SessionRunHook written for tf.estimator finds
the training graph's global step, collections and named tensors through the
default graph in every one of its methods. `Graph.as_default()` would make
them visible but also switches to graph mode, where the eager work hooks do
after a run (`variable.numpy()`, writing a checkpoint or a summary) fails.
`lookups_in` puts the graph on top of TensorFlow's thread-local default-graph
stack alone: `tf.compat.v1.get_default_graph()`, `get_collection` and
`train.get_global_step` answer from it, while `tf.executing_eagerly()` stays
True, so eager operations, `tf.init_scope` and tf.function calls (whose cache
ignores the default graph when executing eagerly) behave as outside it. A
traced graph (a FuncGraph) is marked as not building a function meanwhile:
`tf.inside_function()` reads that mark, and code a hook runs eagerly (an
export with `tf.saved_model.save`, which refuses inside a function) must not
take itself for traced.

`outside_callers_graph` does the opposite for the program's own
`with tf.Graph().as_default():` around an Estimator call (tf.estimator 2.15
built its own graph, so such a call ran): it takes the caller's graphs off
this thread's default-graph and context-switch stacks and executes eagerly,
then puts them back.

Private symbols touched: the thread-local `_default_graph_stack` of
`tensorflow.python.framework.ops` and its `stack` list, the
`_building_function` flag of a graph, the eager context's `context_switches`
stack (its `stack` list and `push`) and `context.eager_mode`.

`in_function_between` tells a `tf.function` body from control flow
(`tf.cond` branches and loop bodies are graphs of TensorFlow's private
`ControlFlowFuncGraph` class).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

TOUCHES = (
    "tensorflow.python.framework.ops:_default_graph_stack.stack",
    "tensorflow.python.framework.func_graph:FuncGraph()._building_function",
    "tensorflow.python.eager.context:Context().context_switches.stack",
    "tensorflow.python.eager.context:Context().context_switches.push",
    "tensorflow.python.eager.context:eager_mode",
    "tensorflow.python.ops.control_flow_v2_func_graphs:ControlFlowFuncGraph",
)


@contextlib.contextmanager
def lookups_in(graph: Any) -> Iterator[None]:
    """Makes `graph` the default graph for lookups; eager execution stays on.

    Outside eager execution (a graph is already being built) this is plain
    `graph.as_default()`.
    """
    import tensorflow as tf
    from tensorflow.python.framework import ops

    if not tf.executing_eagerly():
        with graph.as_default():
            yield
        return
    stack = ops._default_graph_stack.stack
    building = graph._building_function
    graph._building_function = False
    stack.append(graph)
    try:
        yield
    finally:
        graph._building_function = building
        # Remove this entry even if the code inside left the stack unbalanced.
        for index in range(len(stack) - 1, -1, -1):
            if stack[index] is graph:
                del stack[index]
                break


@contextlib.contextmanager
def outside_callers_graph() -> Iterator[None]:
    """Runs the body eagerly, outside the graphs the caller made default.

    For a thread inside `with tf.Graph().as_default():` (not tracing a
    function) in a process where eager execution is on: the caller's graph
    contexts are lifted for the body and restored after it.
    """
    from tensorflow.python.eager import context
    from tensorflow.python.framework import ops

    graphs = ops._default_graph_stack.stack
    switches = context.context().context_switches
    saved_graphs, saved_switches = list(graphs), list(switches.stack)
    del graphs[:]
    del switches.stack[:]
    switches.push(False, context.eager_mode, None)
    try:
        with context.eager_mode():
            yield
    finally:
        graphs[:] = saved_graphs
        switches.stack[:] = saved_switches


def in_function_between(graph: Any, outer: Any) -> bool:
    """Whether `graph` is, or lies inside, a function traced inside `outer`.

    Walking out from `graph` to `outer`, a graph that is not a control-flow
    body (a `tf.cond` branch, a loop's condition or body) is a function's
    own trace, such as a `tf.function` the program calls. False when `graph`
    is `outer` or not inside it.
    """
    from tensorflow.python.ops import control_flow_v2_func_graphs

    inside = False
    while graph is not None and graph is not outer:
        if not isinstance(graph, control_flow_v2_func_graphs.ControlFlowFuncGraph):
            inside = True
        graph = getattr(graph, "outer_graph", None)
    return inside and graph is outer
