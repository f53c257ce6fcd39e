"""Pruning a wrapped function to some of its outputs, and what that may raise.

Checked on TensorFlow 2.21.

`prune(wrapped, feeds, fetches)` is `WrappedFunction.prune`: a new wrapped
function that runs only the part of `wrapped`'s graph the fetches need. The
copy is made differently. TensorFlow lifts the part op by op from Python
(`lift_to_graph`), about 0.15 ms an op: half a second for each of the
several prunes a feature-column model's trace of a few thousand ops gets.
Here a placeholder is made for each input and captured value first, as
`lift_to_graph` makes them (a resource's keeps its handle's shapes and
types, which the shape inference of an op updating a variable needs; a
`PlaceholderWithDefault` of a constant keeps its default), and the needed
nodes of the graph's `GraphDef` are imported in one C++ call
(`import_graph_def`) with their inputs mapped to those placeholders. The
copied ops keep their names; the placeholders get names without scopes
that none of them collides with. What a `GraphDef` does not hold is given
back to each copied tensor: static shapes set from Python (`set_shape`) and
a resource's handle shapes and types.
Anything this copy does not cover (a `TensorInfo` fetch, a
`PlaceholderWithDefault` source whose default is not a constant, a fetch
from another graph) goes to TensorFlow's own `prune`.

A fetch that depends on a placeholder other than the feeds and the captured
values (a metric value computed from the batch, such as
`(tf.reduce_max(logits), tf.no_op())` in `eval_metric_ops`, pruned without
feeds) cannot be copied; TensorFlow says so with
`op_selector.UnliftableError`, which no public module exports, and so does
`prune` here. Other refusals come as ValueError, TypeError or
InvalidArgumentError (`PRUNE_ERRORS`).

Private symbols touched: `op_selector.UnliftableError`, the
`WrappedFunction` constructor, `prune`, `_variable_holder`,
`_num_positional_args` and `_arg_keywords`, a graph's `_functions` and
`_add_function`, and `resource_variable_ops`' handle data helpers.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf
from tensorflow.python.eager import wrap_function
from tensorflow.python.framework import func_graph
from tensorflow.python.ops import op_selector, resource_variable_ops

TOUCHES = (
    "tensorflow.python.ops.op_selector:UnliftableError",
    "tensorflow.python.eager.wrap_function:WrappedFunction",
    "tensorflow.python.eager.wrap_function:WrappedFunction.prune",
    "tensorflow.python.framework.func_graph:FuncGraph.add_capture",
    "tensorflow.python.framework.ops:Graph._add_function",
    "tensorflow.python.ops.resource_variable_ops:get_resource_handle_data",
    "tensorflow.python.ops.resource_variable_ops:_set_handle_shapes_and_types",
)

PRUNE_ERRORS: tuple[type[Exception], ...] = (
    ValueError,
    TypeError,
    tf.errors.InvalidArgumentError,
    op_selector.UnliftableError,
)

# Attributes a copied op leaves out, as `lift_to_graph` does: colocation with
# ops that may not be copied, and the TPU replication context of the source.
_DROPPED_ATTRS = ("_class", "_tpu_replicate")


def prune(wrapped: Any, feeds: Any, fetches: Any, data_only: bool = False) -> Any:
    """`wrapped.prune(feeds, fetches)`, the copy made in one import.

    `feeds` are tensors of `wrapped`'s graph (its captured values among
    them are ignored); `fetches` a structure of its tensors, operations or
    their names. The result is called as TensorFlow's: the feeds' values,
    then nothing for the captures, and returns `fetches`' structure with
    each operation replaced by None.

    With `data_only`, only what the fetches read is copied: control inputs
    (a traced function's ordering of its stateful ops among them) are
    followed nowhere, and kept only between copied ops. A TF1 session run
    of the fetches alone ran that much of a graph without such ordering.
    """
    graph = wrapped.graph
    flat_feeds = [
        graph.as_graph_element(t) for t in tf.nest.flatten(feeds, expand_composites=True)
    ]
    captured = {id(t) for t in graph.internal_captures}
    flat_feeds = [t for t in flat_feeds if id(t) not in captured]
    elements = tf.nest.map_structure(lambda f: _graph_element(graph, f), fetches)
    if elements is None or not _copyable(graph, flat_feeds, elements):
        return _tensorflow_prune(wrapped, feeds, fetches, data_only)
    operations = [e for e in tf.nest.flatten(elements) if isinstance(e, tf.Operation)]
    tensors = [
        t
        for e in tf.nest.flatten(elements)
        if not isinstance(e, tf.Operation)
        for t in tf.nest.flatten(e, expand_composites=True)
    ]
    with graph.as_default():
        pruned_graph = func_graph.FuncGraph("pruned")
    try:
        copies = _copy_part(graph, pruned_graph, tensors + operations, flat_feeds, data_only)
    except _NotCopied:
        return _tensorflow_prune(wrapped, feeds, fetches, data_only)
    pruned_graph.outputs.extend(copies[t] for t in tensors)
    pruned_graph.control_outputs.extend(copies[op] for op in operations)
    pruned_graph.inputs.extend(copies[t] for t in flat_feeds)
    for external, internal in graph.captures:
        pruned_graph.add_capture(external, copies[internal])
    pruned_graph.variables = graph.variables

    def copied(element: Any) -> Any:
        if isinstance(element, tf.Operation):
            return None
        return copies[element]

    pruned_graph.structured_outputs = tf.nest.map_structure(
        copied, elements, expand_composites=True
    )
    pruned_graph.structured_input_signature = None
    pruned = wrap_function.WrappedFunction(
        pruned_graph, variable_holder=wrapped._variable_holder
    )
    pruned._num_positional_args = len(flat_feeds)
    pruned._arg_keywords = [t.op.name for t in flat_feeds]
    return pruned


def _tensorflow_prune(wrapped: Any, feeds: Any, fetches: Any, data_only: bool) -> Any:
    """TensorFlow's own prune, for what the copy does not cover.

    It follows control inputs, so it cannot leave them out (`data_only`).
    """
    if data_only:
        raise ValueError(f"cannot copy out what {fetches!r} reads alone")
    return wrapped.prune(feeds=feeds, fetches=fetches)


def _graph_element(graph: Any, fetch: Any) -> Any:
    if isinstance(fetch, (tf.Operation, tf.Tensor, tf.__internal__.CompositeTensor)):
        return fetch
    if isinstance(fetch, str):
        return graph.as_graph_element(fetch)
    return _Unsupported()


class _Unsupported:
    """A fetch TensorFlow's own prune is left to handle (a `TensorInfo`)."""


class _NotCopied(Exception):
    """A part this copy does not cover, left to TensorFlow's own prune."""


def _copyable(graph: Any, feeds: list[Any], elements: Any) -> bool:
    flat = tf.nest.flatten(elements, expand_composites=True)
    if any(isinstance(e, _Unsupported) or e.graph is not graph for e in flat):
        return False
    sources = feeds + list(graph.internal_captures)
    return all(
        t.op.type != "PlaceholderWithDefault" or t.op.inputs[0].op.type == "Const"
        for t in sources
    )


class _Identity(dict):  # type: ignore[type-arg]
    """Graph elements mapped by identity (tensors do not hash in a function graph)."""

    def __contains__(self, key: object) -> bool:
        return super().__contains__(id(key))

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(id(key), (key, value))

    def __getitem__(self, key: Any) -> Any:
        return super().__getitem__(id(key))[1]


def _copy_part(
    base: Any, graph: Any, targets: list[Any], feeds: list[Any], data_only: bool = False
) -> _Identity:
    """Copies into `graph` the ops of `base` that `targets` need, stopping at sources.

    The sources are `feeds` and `base`'s captured values, each a placeholder
    made first in `graph` (as `lift_to_graph` makes them: a resource's with
    its handle's shapes and types, which the import's shape inference of
    ops updating a variable needs; a `PlaceholderWithDefault` of a constant
    with its default). The needed ops come in one import with their inputs
    mapped to those placeholders, and keep their names: the placeholders
    are named so that no imported name collides with them or their scopes.
    With `data_only`, control inputs are neither followed nor kept, but
    between copied ops. Returns the map from `base`'s tensors and
    operations to their copies.
    """
    sources = list(base.internal_captures) + feeds  # `prune` left captures out of feeds
    source_of_op = {id(t.op): t for t in sources}
    if len(source_of_op) != len(sources):
        raise _NotCopied()  # several outputs of one op fed
    needed = _needed_ops(targets, set(source_of_op), sources, data_only)
    taken = _names_and_scopes(op.name for op in needed)
    copies = _Identity()
    input_map: dict[str, Any] = {}
    with graph.as_default():
        for source in sources:
            placeholder = _placeholder_like(source, lambda n: _free_name(n, taken))
            copies[source] = placeholder
            copies[source.op] = placeholder.op
        for op in needed:
            for tensor in op.inputs:
                source = source_of_op.get(id(tensor.op))
                if source is not None:
                    if source is not tensor:
                        raise _NotCopied()  # another output of a fed op
                    input_map[tensor.name] = copies[tensor]
            for control in () if data_only else op.control_inputs:
                if id(control) in source_of_op:
                    input_map["^" + control.name] = copies[control].outputs[0]
        if needed:
            for function in base._functions.values():
                graph._add_function(function)
            imported = tf.graph_util.import_graph_def(
                _part_graph_def(base, needed, data_only),
                input_map=input_map,
                return_elements=[op.name for op in needed],
                name="",
            )
            for original, copy in zip(needed, imported, strict=True):
                copies[original] = copy
                for before, after in zip(original.outputs, copy.outputs, strict=True):
                    copies[before] = after
                    _copy_static_info(before, after)
    return copies


def _names_and_scopes(names: Any) -> set[str]:
    """Every name, and every scope one of them is in ("a/b/c": "a", "a/b")."""
    taken: set[str] = set()
    for name in names:
        parts = name.split("/")
        taken.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return taken


def _free_name(name: str, taken: set[str]) -> str:
    """`name` without scopes, made unique among `taken` (and then taken)."""
    free = candidate = name.replace("/", "_")
    index = 0
    while candidate in taken:
        index += 1
        candidate = f"{free}_{index}"
    taken.add(candidate)
    return candidate


def _needed_ops(
    targets: list[Any], source_ops: set[int], sources: list[Any], data_only: bool = False
) -> list[Any]:
    """The ops `targets` need (through inputs and, but `data_only`, control inputs).

    Sources are left out.
    """
    seen: set[int] = set(source_ops)
    needed = []
    stack = [t if isinstance(t, tf.Operation) else t.op for t in targets]
    while stack:
        op = stack.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        if op.type == "Placeholder":
            raise op_selector.UnliftableError(
                f"Unable to lift the fetches because they depend on placeholder {op.name!r}, "
                f"which is not among the feeds ({[t.name for t in sources]})."
            )
        needed.append(op)
        stack.extend(t.op for t in op.inputs)
        if not data_only:
            stack.extend(op.control_inputs)
    return needed


def _part_graph_def(base: Any, needed: list[Any], data_only: bool = False) -> Any:
    """`base`'s GraphDef with only the nodes of `needed`, and no function library.

    With `data_only`, a node's control inputs from outside `needed` are dropped.
    """
    whole = base.as_graph_def()
    names = {op.name for op in needed}
    part = type(whole)()
    part.versions.CopyFrom(whole.versions)
    for node in whole.node:
        if node.name in names:
            copy = part.node.add()
            copy.CopyFrom(node)
            for attr in _DROPPED_ATTRS:
                if attr in copy.attr:
                    del copy.attr[attr]
            if data_only:
                kept = [i for i in copy.input if not i.startswith("^") or i[1:] in names]
                del copy.input[:]
                copy.input.extend(kept)
    return part


def _placeholder_like(source: Any, free_name: Any) -> Any:
    """A placeholder for `source` (dtype, shape, device, a handle's shapes and types).

    A `PlaceholderWithDefault` of a constant keeps its default. `free_name`
    turns a name into one no copied op collides with.
    """
    name = free_name(source.op.name)
    with tf.device(source.op.device):
        if source.op.type == "PlaceholderWithDefault":  # of a constant
            default = tf.make_ndarray(source.op.inputs[0].op.get_attr("value"))
            placeholder = tf.compat.v1.placeholder_with_default(
                tf.constant(default, source.dtype, name=free_name(name + "_default")),
                shape=source.shape,
                name=name,
            )
        else:
            placeholder = tf.compat.v1.placeholder(source.dtype, shape=source.shape, name=name)
    handle_data = resource_variable_ops.get_resource_handle_data(source)
    if handle_data.shape_and_type:
        resource_variable_ops._set_handle_shapes_and_types(
            placeholder, handle_data, graph_mode=True
        )
    return placeholder


def _copy_static_info(before: Any, after: Any) -> None:
    """Gives `after` what Python knew of `before` and a GraphDef does not hold.

    Shapes set with `set_shape`, and a resource's handle shapes and types
    (a placeholder of a captured variable gets them from the capture).
    """
    if before.shape != after.shape:
        try:
            after.set_shape(before.shape)
        except ValueError:
            pass  # the copy's own inference disagrees: it knows its graph
    if before.dtype == tf.resource:
        handle_data = resource_variable_ops.get_resource_handle_data(before)
        if handle_data.shape_and_type:
            resource_variable_ops._set_handle_shapes_and_types(
                after, handle_data, graph_mode=True
            )
