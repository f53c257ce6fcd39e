"""Values hooks ask for: from `SessionRunArgs.fetches` to numpy results.

A hook names what it wants by tensor or operation object (often captured
from the model_fn's first trace), by graph name (`"softmax_tensor"`,
`"loss:0"`), or by variable. Tensors of one trace do not exist in another, so
every fetch becomes a string key that is looked up again, by name, in the
graph of the step that computes it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator._src.engine.variable_store import as_tf_variable
from keras_estimator._src.tf_internals import control_edges

_VARIABLE_PREFIX = "variable:"
# Fetching "summaries:<dir>" makes the step record model_fn's summaries there.
SUMMARY_PREFIX = "summaries:"
_OPERATION_PREFIX = "operation:"
_UPDATES = frozenset({"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"})
# Graph -> update op name -> the name of the tensor reading the value after it.
_READS_AFTER: weakref.WeakKeyDictionary[Any, dict[str, str]] = weakref.WeakKeyDictionary()


def _value_after_update(fetch: Any) -> str | None:
    """For an update a hook built in a graph, the name of its value after the update.

    In a traced TF2 graph `v.assign_add(1.0)` (and `assign`, `assign_sub`,
    `tf.compat.v1.assign_add`) returns a variable standing for the value
    after the update, its `op` the update; in TF1 it returned a tensor, and
    `session.run` of it ran the update. Fetched as a variable it would be
    read without the update, so it is fetched as a read that waits for the
    update, as 2.15 fetched it.
    """
    if not isinstance(fetch, tf.Variable):
        return None
    try:
        op = fetch.op
    except (AttributeError, RuntimeError, ValueError):
        return None
    if not isinstance(op, tf.Operation) or op.type not in _UPDATES:
        return None
    reads = _READS_AFTER.setdefault(op.graph, {})
    name = reads.get(op.name)
    if name is None:
        with op.graph.as_default(), tf.control_dependencies([op]):
            value = tf.raw_ops.ReadVariableOp(resource=op.inputs[0], dtype=fetch.dtype)
        name = reads[op.name] = value.name
    return name


class FetchPlan:
    """The fetches of every hook for one run, flattened to string keys."""

    def __init__(self, requests: Sequence[Any]) -> None:
        self._structures: list[Any] = []
        self._leaf_keys: list[list[str]] = []
        self.keys: list[str] = []
        self.variables: dict[str, Any] = {}
        # Set by the hook dispatcher: the run may be several steps, each
        # fetching `keys` (observer hooks only); the step functions then
        # return every step's values (`StepwiseValues`).
        self.every_step = False
        for request in requests:
            fetches = None if request is None else request.fetches
            if request is not None and getattr(request, "feed_dict", None):
                raise ValueError(
                    f"A hook returned SessionRunArgs with feed_dict="
                    f"{request.feed_dict!r}; feeds do not exist in TF2. Feed data "
                    "through input_fn (tf.data) instead."
                )
            self._structures.append(fetches)
            leaf_keys = (
                [] if fetches is None else [self._key(leaf) for leaf in tf.nest.flatten(fetches)]
            )
            self._leaf_keys.append(leaf_keys)
            for key in leaf_keys:
                if key not in self.keys:
                    self.keys.append(key)

    def _key(self, fetch: Any) -> str:
        if isinstance(fetch, str):
            return fetch
        if isinstance(fetch, tf.Operation):
            return _OPERATION_PREFIX + fetch.name
        updated = _value_after_update(fetch)
        if updated is not None:
            return updated
        variable = as_tf_variable(fetch)
        if variable is not None:
            key = _VARIABLE_PREFIX + variable.name.split(":")[0]
            self.variables[key] = variable
            return key
        if isinstance(fetch, tf.Tensor) and hasattr(fetch, "graph"):
            return fetch.name
        raise TypeError(
            f"A hook asked to fetch {fetch!r} ({type(fetch).__name__}); fetches "
            "must be tensors, operations, variables or their graph names."
        )

    def results(self, values: dict[str, Any]) -> list[Any]:
        """Each hook's results, nested like its fetches."""
        return [self.result_for(index, values) for index in range(len(self._structures))]

    def result_for(self, index: int, values: dict[str, Any]) -> Any:
        """The results of the `index`-th request, nested like its fetches."""
        fetches = self._structures[index]
        leaf_keys = self._leaf_keys[index]
        if fetches is None:
            return None
        if isinstance(fetches, str):
            return values[leaf_keys[0]]
        return tf.nest.pack_sequence_as(fetches, [values[key] for key in leaf_keys])

    def fetches_of(self, index: int) -> Any:
        """What the `index`-th request fetched (None: nothing)."""
        return self._structures[index]

    def keys_of(self, index: int) -> list[str]:
        """The keys of the `index`-th request's fetches."""
        return self._leaf_keys[index]

    def only_reads(self) -> bool:
        """Whether fetching it runs nothing: no operations, no summaries.

        Only such a plan may be fetched on every step of a fused run.
        """
        return not any(key.startswith((_OPERATION_PREFIX, SUMMARY_PREFIX)) for key in self.keys)


class StepwiseValues:
    """What a run of several fetching steps fetched, step by step.

    Args:
        global_steps: the global step after each step, in order.
        values: key -> the values of every step, stacked on a first axis.
    """

    def __init__(self, global_steps: Any, values: dict[str, Any]) -> None:
        self.global_steps = [int(step) for step in global_steps]
        self._values = values

    def __len__(self) -> int:
        return len(self.global_steps)

    def step(self, index: int) -> dict[str, Any]:
        """key -> the value the `index`-th step fetched, as a one-step run gives it."""
        values = {}
        for key, stacked in self._values.items():
            value = stacked[index]
            # A step's own array, as a one-step run returns it (not a view
            # into the stack); scalars come out as numpy scalars alike.
            values[key] = value.copy() if isinstance(value, np.ndarray) else value
        return values


def resolve(
    keys: Sequence[str],
    variables: dict[str, Any],
    variable_named: Callable[[str], Any] = lambda name: None,
    read_before: dict[str, tf.Tensor] | None = None,
) -> dict[str, tf.Tensor]:
    """Looks the keys up in the graph being traced; returns key -> tensor.

    A name may also be a variable's (`"global_step"`), found with
    `variable_named`. A variable named in `read_before` yields that earlier
    read instead of a read after the step. Operations are run (by control
    dependency) and yield a placeholder value that `to_numpy` turns into None.
    """
    graph = tf.compat.v1.get_default_graph()
    earlier = read_before or {}
    resolved = {}
    for key in keys:
        name = key.split(":")[0]
        named_variable = variable_named(name)
        if key.startswith(SUMMARY_PREFIX):
            # Summaries are written while model_fn is traced; nothing to return.
            resolved[key] = tf.constant(_OPERATION_DONE)
        elif key in variables:
            variable_name = key[len(_VARIABLE_PREFIX) :]
            # A hook made by the model_fn holds the building trace's stand-in;
            # the store's variable of that name is the one training updates.
            variable = variable_named(variable_name)
            if variable is None:
                variable = variables[key]
            read = earlier.get(variable_name)
            if read is None:
                read = _early_read_of(graph, variable)
            resolved[key] = tf.identity(variable if read is None else read)
        elif named_variable is not None and (":" not in key or key.endswith(":0")):
            resolved[key] = tf.identity(earlier.get(name, named_variable))
        elif key.startswith(_OPERATION_PREFIX):
            operation = _lookup_operation(graph, key[len(_OPERATION_PREFIX) :])
            resolved[key] = _after(operation)
        else:
            resolved[key] = _lookup_tensor(graph, key)
    return resolved


_OPERATION_DONE = "__operation_ran__"


def split_for_graph(
    graph: Any,
    keys: Sequence[str],
    variables: dict[str, Any],
    variable_named: Callable[[str], Any],
    read_before: dict[str, tf.Tensor],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """What `resolve` would give, for a step traced earlier into `graph`.

    Returns `(in_graph, after)`: key -> the tensor or operation of `graph`
    that computes it (a variable's read from before the step is one), and
    key -> the variable to read once the step has run, or None for a key
    whose value is only a mark that it ran (summaries, operations).
    """
    in_graph: dict[str, Any] = {}
    after: dict[str, Any] = {}
    for key in keys:
        name = key.split(":")[0]
        named_variable = variable_named(name)
        variable_name = None
        if key.startswith(SUMMARY_PREFIX):
            after[key] = None
        elif key in variables:
            variable_name = key[len(_VARIABLE_PREFIX) :]
            variable = variable_named(variable_name)
            after[key] = variables[key] if variable is None else variable
        elif named_variable is not None and (":" not in key or key.endswith(":0")):
            variable_name = name
            after[key] = named_variable
        elif key.startswith(_OPERATION_PREFIX):
            in_graph[key] = _lookup_operation(graph, key[len(_OPERATION_PREFIX) :])
            after[key] = None
        else:
            element = _lookup_element(graph, key)
            if isinstance(element, tf.Operation):
                after[key] = None
            in_graph[key] = element
        if variable_name is not None and variable_name in read_before:
            in_graph[key] = read_before[variable_name]
            del after[key]
        elif key in variables:
            # A variable object, as 2.15 fetched it (a name fetched no value there).
            early = _early_read_of(graph, after[key])
            if early is not None:
                in_graph[key] = early
                del after[key]
    return in_graph, after


def read_after(after: dict[str, Any]) -> dict[str, tf.Tensor]:
    """The values of `split_for_graph`'s `after` keys, in the graph being traced."""
    return {
        key: tf.constant(_OPERATION_DONE) if variable is None else tf.identity(variable)
        for key, variable in after.items()
    }


def _lookup_element(graph: Any, name: str) -> Any:
    """The tensor `name` names in `graph`, or its operation if it has no output."""
    try:
        if ":" in name:
            return _earlier_read(graph, graph.get_tensor_by_name(name))
        operation = graph.get_operation_by_name(name)
    except (KeyError, ValueError):
        raise ValueError(_missing(graph, name)) from None
    return _earlier_read(graph, operation.outputs[0]) if operation.outputs else operation


def to_numpy(values: dict[str, Any]) -> dict[str, Any]:
    converted: dict[str, Any] = {}
    for key, value in values.items():
        array = value.numpy() if hasattr(value, "numpy") else value
        if key.startswith((_OPERATION_PREFIX, SUMMARY_PREFIX)):
            converted[key] = None
        else:
            converted[key] = array
    return converted


def _lookup_operation(graph: Any, name: str) -> Any:
    try:
        return graph.get_operation_by_name(name)
    except KeyError:
        raise ValueError(_missing(graph, name)) from None


def _lookup_tensor(graph: Any, name: str) -> tf.Tensor:
    element = _lookup_element(graph, name)
    return _after(element) if isinstance(element, tf.Operation) else element


def _after(operation: Any) -> tf.Tensor:
    """A placeholder value that makes the step run `operation`."""
    with tf.control_dependencies([operation]):
        return tf.constant(_OPERATION_DONE)


def _missing(graph: Any, name: str) -> str:
    stem = name.split(":")[0].rsplit("/", 1)[-1]
    similar = sorted(
        op.name for op in graph.get_operations() if stem and stem in op.name
    )[:10]
    return (
        f"A hook asked to fetch {name!r}, which the model_fn does not create. Name "
        "the tensor inside model_fn (e.g. `tf.identity(x, name=...)`) and fetch "
        f"that name. Similar names in the step: {similar}."
    )


_EARLY_READS = "keras_estimator_early_reads"
# Ops that write the resource they take (a variable's update).
_WRITE_PREFIXES = ("Assign", "ResourceApply", "ResourceSparseApply", "ResourceScatter")


def note_reads_before_updates(graph: Any, first_op: int) -> None:
    """Records, for the model_fn's ops from `first_op` on, which reads to fetch earlier.

    A read of a variable made after the step's update of it, with no control
    dependency of its own (`tf.identity(bias)` built after `minimize`), was
    in a TF1 session unordered against the update and ran before it: a
    hook fetching it saw the value the step started from (tf.estimator
    2.15's LoggingTensorHook logged the initial bias at the first step). In
    a traced step reads follow writes in program order, so such a read is
    mapped to a read of the same variable made before the update, which
    `_lookup_element` fetches instead.
    """
    early: dict[Any, tf.Tensor] = {}
    written: set[Any] = set()
    late: dict[str, tf.Tensor] = {}
    for op in graph.get_operations()[first_op:]:
        handles = [t.ref() for t in op.inputs if t.dtype == tf.resource]
        if not handles:
            continue
        if op.type == "ReadVariableOp":
            handle = handles[0]
            if handle not in written:
                early.setdefault(handle, op.outputs[0])
            elif handle in early and not op.control_inputs:
                late[op.outputs[0].name] = early[handle]
        elif op.type.startswith(_WRITE_PREFIXES):
            written.update(handles)
    if late:
        graph.add_to_collection(_EARLY_READS, late)
    # A hook fetching the variable itself got, in 2.15, the read the variable
    # made when created: unordered against the update as well.
    internal_to_external = {internal.ref(): external for external, internal in graph.captures}
    by_variable = {
        id(internal_to_external[handle]): read
        for handle, read in early.items()
        if handle in written and handle in internal_to_external
    }
    if by_variable:
        graph.add_to_collection(_EARLY_VARIABLE_READS, by_variable)


_EARLY_VARIABLE_READS = "keras_estimator_early_variable_reads"


# Ops that take a variable's handle without writing it.
_READ_ONLY = frozenset({"ReadVariableOp", "VarIsInitializedOp", "VariableShape", "Identity"})


def order_late_reads_first(graph: Any, fetched: Sequence[Any], traced_ops: int) -> None:
    """Makes reads that a hook built after the step's trace run before its updates.

    A hook's `begin()` builds on the step's graph once it is traced
    (`tf.reduce_sum(w) * 3.0` of a variable the step trains), outside the
    trace's ordering. In 2.15's session that read was unordered against the
    update as well, but it needed nothing computed and ran first; in a step
    with nothing to order it the executor may run it after the update, and
    the hook then sees the next step's value under load. So each such read
    (no control inputs of its own) that `fetched` needs becomes a control
    input of every op of the trace, among the first `traced_ops`, that
    takes the same handle and may write it.
    """
    operations = graph.get_operations()
    late = {id(op) for op in operations[traced_ops:]}
    reads: list[Any] = []
    seen: set[int] = set()
    pending = [t.op if isinstance(t, tf.Tensor) else t for t in fetched]
    while pending:
        op = pending.pop()
        if id(op) in seen or id(op) not in late:
            continue
        seen.add(id(op))
        if op.type == "ReadVariableOp" and not op.control_inputs:
            reads.append(op)
        pending.extend(t.op for t in op.inputs)
    if not reads:
        return
    by_handle = {id(read.inputs[0]): read for read in reads}
    for op in operations[:traced_ops]:
        if op.type in _READ_ONLY:
            continue
        for tensor in op.inputs:
            read = by_handle.get(id(_handle_source(tensor)))
            if read is not None and read not in op.control_inputs:
                control_edges.add_control_input(op, read)


def _handle_source(tensor: tf.Tensor) -> tf.Tensor:
    """The tensor a resource handle is an identity of (itself if none)."""
    while tensor.dtype == tf.resource and tensor.op.type == "Identity" and tensor.op.inputs:
        tensor = tensor.op.inputs[0]
    return tensor


def _early_read_of(graph: Any, variable: Any) -> tf.Tensor | None:
    """The step's read of `variable` from before its update, if the model_fn made one."""
    handle = getattr(variable, "handle", None)
    if handle is None:
        return None
    for by_variable in graph.get_collection(_EARLY_VARIABLE_READS):
        read = by_variable.get(id(handle))
        if read is not None:
            return read  # type: ignore[no-any-return]
    return None


def _earlier_read(graph: Any, tensor: tf.Tensor) -> tf.Tensor:
    """`tensor`, or the read made before the update it would follow (see above).

    A value computed from such reads (`tf.reduce_sum(w) * 2.0` built after
    `minimize`) is computed again from the reads made before the update,
    as 2.15's session computed it before the update.
    """
    maps = graph.get_collection(_EARLY_READS)
    if not maps:
        return tensor
    late: dict[str, tf.Tensor] = {}
    for each in maps:
        late.update(each)
    source = tensor
    if tensor.op.type == "Identity" and not tensor.op.control_inputs:
        source = tensor.op.inputs[0]
    if source.name in late:
        return late[source.name]
    recomputed = _recomputed_from_earlier_reads(graph, tensor, late)
    return tensor if recomputed is None else recomputed


def _stateful(op: Any) -> bool:
    try:
        return bool(op.op_def.is_stateful)
    except (AttributeError, KeyError, ValueError):
        return True  # no definition to go by (a function call): not recomputed


def _recomputed_from_earlier_reads(
    graph: Any, tensor: tf.Tensor, late: dict[str, tf.Tensor]
) -> tf.Tensor | None:
    """`tensor` computed again with each late read in `late` replaced by its earlier one.

    Only through stateless ops without control inputs of their own (what a
    TF1 session left unordered against the update); None when `tensor`
    depends on no late read, or through any other op.
    """
    order: list[Any] = []
    reaches: dict[int, bool] = {}

    def visit(op: Any) -> bool:
        # Iterative post-order: whether `op` depends on a late read.
        stack = [(op, False)]
        while stack:
            current, expanded = stack.pop()
            if id(current) in reaches:
                continue
            if any(output.name in late for output in current.outputs):
                reaches[id(current)] = True
                continue
            if not expanded:
                stack.append((current, True))
                stack.extend((t.op, False) for t in current.inputs if id(t.op) not in reaches)
                continue
            reaches[id(current)] = any(reaches.get(id(t.op), False) for t in current.inputs)
            if reaches[id(current)]:
                order.append(current)
        return reaches[id(op)]

    if not visit(tensor.op):
        return None
    if any(op.control_inputs or _stateful(op) for op in order):
        return None
    made: dict[str, tf.Tensor] = dict(late)
    with graph.as_default():
        for op in order:
            with tf.device(op.device):
                clone = graph.create_op(
                    op.type,
                    [made.get(t.name, t) for t in op.inputs],
                    dtypes=[t.dtype for t in op.outputs],
                    name=f"{op.name.rsplit('/', 1)[-1]}_before_update",
                    attrs=dict(op.node_def.attr),
                    op_def=op.op_def,
                )
            for original, copy in zip(op.outputs, clone.outputs, strict=True):
                made[original.name] = copy
    return made[tensor.name]
