"""`variable.op` of the Estimator's variables, as TF1 graph code reads it.

Checked on TensorFlow 2.21. TF1 programs name things after their variables'
ops: `tf.compat.v1.summary.histogram(v.op.name, v)` in a model_fn,
`{v.op.name: v for v in tf.compat.v1.global_variables()}` in a hook's
`begin()`. In tf.estimator 2.15 every variable lived in the Estimator's graph,
and its `op` was its `VarHandleOp`, named as the variable without ":0". The
Estimator's variables are made eagerly, outside the traces that use them, and
an eager variable's `op` raises AttributeError ("Tensor.op is undefined when
eager execution is enabled").

`name_ops_as_in_graphs(variable)` gives such a variable (and each per-device
copy of a distributed one) the class `GraphNamedVariable`: a ResourceVariable
that adds three things: an `op` which, while its handle is eager, describes the
op the variable stood for in a 2.15 graph (`VariableOp`: its `name`, `type`
"VarHandleOp", the `graph` asked from, no `traceback`), and a `graph`, the
graph asked from (the model_fn's, or the one hooks' `begin()` runs in, as
2.15's variables were in the graph of the call: `v.graph is
tf.compat.v1.get_default_graph()`, `with v.graph.as_default():`), and, in a
graph being built, an `initializer`: a no-op `variable_initializers` knows
as one (`tf.group(w.initializer, ...)` as a Scaffold's `init_op`; the
variable was initialized when made). A variable
whose handle is a graph tensor answers with that tensor's op and graph, as
before. Only the class of the store's own plain ResourceVariables changes;
it adds no state.

TensorFlow itself tells an eager variable from an unread one by
`hasattr(variable, "op")` (a FuncGraph's `control_dependencies`, reached by
`tf.group(train_op, assign_add(global_step, 1))`), and Keras and this
package may too: asked from their own modules, `op` and `graph` raise
AttributeError as an eager variable's do, so their code runs as before.

Private symbols touched: `resource_variable_ops.ResourceVariable` (the class
subclassed and replaced on instances) and `ops.EagerTensor`.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, NamedTuple

# Modules whose code sees an eager variable's `op` as before (AttributeError).
_LIBRARY_PREFIXES = ("tensorflow.", "keras.", "keras_estimator.", "tf_keras.")
# Where distributed variables forward `op` to their per-device copies.
_DISTRIBUTED_VALUES = ("tensorflow.python.distribute.values", "tensorflow.python.distribute.ps_values")

TOUCHES = (
    "tensorflow.python.ops.resource_variable_ops:ResourceVariable.op",
    "tensorflow.python.ops.resource_variable_ops:ResourceVariable.graph",
    "tensorflow.python.ops.resource_variable_ops:ResourceVariable.initializer",
    "tensorflow.python.framework.ops:EagerTensor",
)


class VariableOp(NamedTuple):
    """What a 2.15 graph variable's `op` said of itself that programs read."""

    name: str
    graph: Any
    traceback: Any = None
    type: str = "VarHandleOp"


@functools.cache
def graph_named_variable_class() -> type:
    """`GraphNamedVariable`, made on first use (TensorFlow is imported lazily)."""
    import tensorflow as tf
    from tensorflow.python.framework import ops
    from tensorflow.python.ops import resource_variable_ops

    from keras_estimator._src.tf_internals import variable_initializers

    class GraphNamedVariable(resource_variable_ops.ResourceVariable):
        """A ResourceVariable whose `op` has a name also while its handle is eager."""

        @property
        def op(self) -> Any:
            if not isinstance(self.handle, ops.EagerTensor):
                return super().op
            if _asked_by_a_library():
                return super().op  # raises, as for any eager variable
            return VariableOp(name=op_name(self), graph=ops.get_default_graph())

        @property
        def graph(self) -> Any:
            if not isinstance(self.handle, ops.EagerTensor) or _asked_by_a_library():
                return super().graph
            return ops.get_default_graph()

        @property
        def initializer(self) -> Any:
            initializer = super().initializer
            if (
                initializer is not None
                or not isinstance(self.handle, ops.EagerTensor)
                or tf.executing_eagerly()
                or _asked_by_a_library()
            ):
                return initializer
            return variable_initializers.stand_in(f"{op_name(self)}/Assign")

    GraphNamedVariable.__module__ = __name__
    return GraphNamedVariable


def op_name(variable: Any) -> str:
    """The name of the op a variable stood for in a TF1 graph: its name without ":0"."""
    name: str = variable.name
    return name[:-2] if name.endswith(":0") else name


def _asked_by_a_library() -> bool:
    """Whether `op` is asked by library code, not by a program's.

    A distributed variable's own `op` (in tf.distribute) asks its copies on
    the program's behalf: the caller that counts is the one that asked it.
    """
    frame: Any = sys._getframe(2)  # the caller of the `op` property
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not module.startswith(_DISTRIBUTED_VALUES):
            return module.startswith(_LIBRARY_PREFIXES)
        frame = frame.f_back
    return False


def name_ops_as_in_graphs(variable: Any) -> None:
    """Gives `variable` (or its per-device copies) `GraphNamedVariable`'s `op`."""
    from tensorflow.python.ops import resource_variable_ops

    named = graph_named_variable_class()
    for each in getattr(variable, "values", None) or (variable,):
        if type(each) is resource_variable_ops.ResourceVariable:
            each.__class__ = named
