"""TF1 run semantics inside a TF2 step: only what is fetched runs.

A `tf.function` runs every stateful op traced into it. A TF1 session ran only
the ops a fetch depended on, and tf.estimator programs rely on that: their
model_fn builds `optimizer.minimize(...)`, `assign`s and `UPDATE_OPS` in every
mode and returns one EstimatorSpec, and evaluation and prediction never
trained. Here such a body is traced into a graph of its own with no automatic
control dependencies (`tf.compat.v1.wrap_function`), pruned to its outputs
and to the ops that update evaluation state, and called as one function from
the step being traced.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import tensorflow as tf

from keras_estimator._src.tf_internals import control_edges, pruning

# Ops that write a resource variable through its handle (input 0).
_WRITES = frozenset(
    {
        "AssignVariableOp",
        "AssignAddVariableOp",
        "AssignSubVariableOp",
        "ResourceScatterAdd",
        "ResourceScatterSub",
        "ResourceScatterMul",
        "ResourceScatterDiv",
        "ResourceScatterMin",
        "ResourceScatterMax",
        "ResourceScatterUpdate",
        "ResourceScatterNdAdd",
        "ResourceScatterNdSub",
        "ResourceScatterNdUpdate",
    }
)


def call(
    body: Callable[[Any], Any],
    data: Any,
    state_variables: Callable[[], Iterable[tf.Variable]],
) -> Any:
    """Calls `body(data)` so that only its outputs and state updates run.

    Args:
        body: traced once on placeholders shaped like `data`; returns a
            nest of tensors.
        data: the step's input (a nest of tensors of the graph being traced).
        state_variables: the variables whose updates run even when no output
            depends on them (metric variables: a Keras metric's
            `update_state` feeds nothing that `result()` reads). Called after
            `body` is traced.

    Returns:
        `body`'s outputs, computed by running only the ops they depend on and
        the updates of `state_variables`.
    """
    signature = tf.nest.map_structure(tf.type_spec_from_value, data)
    traced = tf.compat.v1.wrap_function(body, signature=[signature])
    return call_traced(traced, data, state_variables)


def call_traced(
    traced: Any,
    data: Any,
    state_variables: Callable[[], Iterable[tf.Variable]],
) -> Any:
    """`call` of a body already traced (`tf.compat.v1.wrap_function`) on `data`'s structure.

    One trace can serve several steps: each call prunes a copy of its graph.
    The graph's ops on `state_variables` are ordered as traced, so prune
    anything that must not run the updates (reads of final values) first.
    """
    return call_traced_with(traced, data, state_variables, [])[0]


def call_traced_with(
    traced: Any,
    data: Any,
    state_variables: Callable[[], Iterable[tf.Variable]],
    extra: list[Any],
) -> tuple[Any, list[tf.Tensor]]:
    """`call_traced`, also running `extra`: tensors and operations of the trace's graph.

    They may have been added to the graph after the trace (by a hook's
    `begin()`, as to a TF1 graph). Returns the outputs and the values of
    `extra`'s tensors, in order.
    """
    flat_data = tf.nest.flatten(data, expand_composites=True)
    outputs = traced.structured_outputs
    flat_outputs = tf.nest.flatten(outputs, expand_composites=True)
    graph = traced.graph
    # Values bound at call time (a collective's instance key) are inputs of
    # the pruned function, bound again at call time in the calling graph.
    late_bound = list(
        zip(
            graph.deferred_external_captures,
            graph.deferred_internal_captures,
            strict=True,
        )
    )
    late_feeds = [t for _, internal in late_bound for t in tf.nest.flatten(internal)]
    feeds = graph.inputs[: len(flat_data)] + late_feeds
    state = _state_handles(graph, state_variables())
    ordered = state | _collective_tokens(graph)
    _order_state_access(graph, ordered)
    updates = [
        op for op in graph.get_operations() if op.type in _WRITES and _touched(op, state)
    ]
    tensors = [t for t in extra if isinstance(t, tf.Tensor)]
    operations = [op for op in extra if isinstance(op, tf.Operation)]
    pruned = pruning.prune(traced, feeds, [flat_outputs + tensors, updates + operations])
    # TensorFlow's closure binds itself when the calling function runs (or
    # gives the value, when called eagerly), as a list of tensors.
    late_values = [tensor for closure, _ in late_bound for tensor in closure()]
    results = pruned(*flat_data, *late_values)[0]
    count = len(flat_outputs)
    packed = tf.nest.pack_sequence_as(outputs, results[:count], expand_composites=True)
    return packed, list(results[count:])


def _collective_tokens(graph: Any) -> set[int]:
    """Resources that order a graph's collectives (the same on every worker).

    Workers must launch collectives in one order; a TF2 function orders the
    ops sharing an ordering token, as ops on one state variable.
    """
    return {
        id(tensor)
        for op in graph.get_operations()
        if op.type.startswith("Collective")
        for tensor in op.inputs
        if tensor.dtype == tf.resource
    }


@contextlib.contextmanager
def ops_created() -> Iterator[list[Any]]:
    """Collects the operations the enclosed code adds to the default graph.

    In a graph without automatic control dependencies, a value read after an
    update (a Keras metric's `result()` after `update_state()`, which returns
    nothing to depend on) must depend on these explicitly.
    """
    graph = tf.compat.v1.get_default_graph()
    start = len(graph.get_operations())
    created: list[Any] = []
    yield created
    created.extend(graph.get_operations()[start:])


def _state_handles(graph: Any, variables: Iterable[tf.Variable]) -> set[int]:
    """Ids of `graph`'s placeholders for the handles of `variables` (all copies)."""
    handles = set()
    for variable in variables:
        for component in getattr(variable, "values", None) or (variable,):
            handles.add(id(component.handle))
    return {
        id(placeholder)
        for external, placeholder in graph.captures
        if id(external) in handles
    }


def _touched(op: Any, state: set[int]) -> list[int]:
    return [id(tensor) for tensor in op.inputs if id(tensor) in state]


def _order_state_access(graph: Any, state: set[int]) -> None:
    """Orders the ops on each resource of `state` as they were traced.

    Automatic control dependencies did this in a `tf.function`; without them a
    read-modify-write (Keras' `assign_add` is `assign(read + value)`) could
    interleave with another on the same variable: two `update_state` calls
    in one step, or replicas sharing one variable, would lose updates. Ops
    using a collective's ordering token count as writing it.
    """
    last_write: dict[int, Any] = {}
    reads_since_write: dict[int, list[Any]] = {}
    for op in graph.get_operations():
        for handle in _touched(op, state):
            earlier = [last_write[handle]] if handle in last_write else []
            if op.type in _WRITES or op.type.startswith("Collective"):
                earlier += reads_since_write.pop(handle, [])
                last_write[handle] = op
            else:
                reads_since_write.setdefault(handle, []).append(op)
            for dependency in earlier:
                if dependency is not op and dependency not in op.control_inputs:
                    control_edges.add_control_input(op, dependency)
