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

Private symbols touched: the thread-local `_default_graph_stack` of
`tensorflow.python.framework.ops` and its `stack` list, and the
`_building_function` flag of a graph.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

TOUCHES = (
    "tensorflow.python.framework.ops:_default_graph_stack.stack",
    "tensorflow.python.framework.func_graph:FuncGraph()._building_function",
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
