"""One compiled step, called as cheaply as its graph allows.

A run that hooks fetch values from is one step in its own compiled call,
so what a call costs besides the step itself is paid on every step: with a
hook fetching on every step, about half of a small model's step time. Two
costs are avoidable. tf.function's argument binding is skipped by calling
the traced function through its flat inputs; and TensorFlow's default
executor hands each ready op to its inter-op thread pool, where a
single-threaded executor runs the kernels one after another in the calling
thread (large kernels still split their work over the intra-op threads).
The single-threaded executor cannot run graphs with low-level control flow
(what `tf.cond` and `tf.while_loop` become), collectives, or ops on more
than one device; `StepCall` uses it only for graphs that have none, and
falls back to the default executor should TensorFlow refuse one anyway
(it refuses before running any op). On the benchmark's MLP, with a hook
fetching the loss every step, it makes training about 1.15x as fast.

The call itself goes through `function_calls.FlatCall` where it can: the
iterator's flat inputs are kept while it lives, the captures read once, and
the outputs put back into their structure by positions worked out at the
first call (checked against tf.function's own packing), rather than by
TensorFlow's general call path.
"""

from __future__ import annotations

import functools
import itertools
import weakref
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator._src.tf_internals import function_calls

# Ops that become, or are, low-level control flow once a function is
# instantiated (functional If/While/Case are lowered to Switch/Merge).
_CONTROL_FLOW_OPS = frozenset(
    {
        "If",
        "StatelessIf",
        "While",
        "StatelessWhile",
        "Case",
        "StatelessCase",
        "Switch",
        "RefSwitch",
        "_SwitchN",
        "Merge",
        "RefMerge",
        "Enter",
        "RefEnter",
        "Exit",
        "RefExit",
        "NextIteration",
        "RefNextIteration",
        "LoopCond",
        "ControlTrigger",
    }
)
# What TensorFlow's refusal of the single-threaded executor says.
REFUSAL = _REFUSAL = "Single-threaded executor"


class StepCall:
    """Calls a concrete function on one thread when its graph allows it.

    Args:
        concrete: a traced `ConcreteFunction`.
        single_threaded: whether to try the single-threaded executor;
            default: when `allows_single_thread(concrete.graph)`.
    """

    def __init__(self, concrete: Any, single_threaded: bool | None = None) -> None:
        self.concrete = concrete
        if single_threaded is None:
            single_threaded = allows_single_thread(concrete.graph)
        self.single_threaded = single_threaded
        flat_call = function_calls.FlatCall(concrete)
        try:
            self._pack = _packer(concrete) if flat_call.usable else None
        except (TypeError, ValueError):  # a structure tf.nest packs otherwise
            self._pack = None
        self._flat_call = flat_call
        # (a weak reference to the last argument, its flat tensors): kept only
        # while it lives, since an iterator's resource must go with it.
        self._cached: tuple[Any, list[Any]] | None = None

    def __call__(self, *args: Any) -> Any:
        pack = self._pack
        if pack is None:
            return self._call_traced(*args)
        flat = self._flatten(args)
        try:
            return pack(self._flat_call(flat, self.single_threaded))
        except (tf.errors.FailedPreconditionError, tf.errors.UnimplementedError) as error:
            if not self.single_threaded or _REFUSAL not in str(error):
                raise
        self.single_threaded = False
        return pack(self._flat_call(flat, False))

    def _call_traced(self, *args: Any) -> Any:
        try:
            return function_calls.call_traced(
                self.concrete, *args, single_threaded=self.single_threaded
            )
        except (tf.errors.FailedPreconditionError, tf.errors.UnimplementedError) as error:
            if not self.single_threaded or _REFUSAL not in str(error):
                raise
        self.single_threaded = False
        return function_calls.call_traced(self.concrete, *args)

    def _flatten(self, args: tuple[Any, ...]) -> list[Any]:
        cached = self._cached
        if len(args) == 1 and cached is not None and cached[0]() is args[0]:
            return cached[1]
        flat = tf.nest.flatten(args, expand_composites=True)
        if len(args) == 1:
            try:
                self._cached = (weakref.ref(args[0], self._forget), flat)
            except TypeError:  # not weakly referenceable: flattened every call
                self._cached = None
        return flat

    def _forget(self, reference: Any) -> None:
        # Called in whichever thread frees the argument.
        cached = self._cached
        if cached is not None and cached[0] is reference:
            self._cached = None


def _packer(concrete: Any) -> Callable[[list[Any]], Any] | None:
    """A function putting `concrete`'s flat outputs into its output structure.

    For outputs that are tensors in (nested) plain dicts, lists and tuples,
    in the order tf.function flattened them; None otherwise (the caller then
    calls the function as usual).
    """
    structure = concrete.structured_outputs
    outputs = list(concrete.outputs)
    leaves = tf.nest.flatten(structure, expand_composites=True)
    if len(leaves) != len(outputs) or any(
        not isinstance(leaf, tf.Tensor) or leaf is not output
        for leaf, output in zip(leaves, outputs, strict=True)
    ):
        return None
    counter = itertools.count()
    build = _builder(structure, counter)
    if build is None or next(counter) != len(outputs):
        return None
    packed = build(outputs)
    repacked = tf.nest.flatten(packed, expand_composites=True)
    if any(a is not b for a, b in zip(repacked, outputs, strict=True)):
        return None
    tf.nest.assert_same_structure(packed, structure, expand_composites=True)
    return build


def _builder(structure: Any, counter: Any) -> Callable[[list[Any]], Any] | None:
    """Builds `structure` from flat values, taking positions from `counter`."""
    if isinstance(structure, tf.Tensor):
        position = next(counter)
        return lambda flat: flat[position]
    if type(structure) is dict:
        keys = sorted(structure)  # tf.nest's order for a dict
        parts = [_builder(structure[key], counter) for key in keys]
        if any(part is None for part in parts):
            return None
        pairs = list(zip(keys, parts, strict=True))
        return lambda flat: {key: part(flat) for key, part in pairs}  # type: ignore[misc]
    if type(structure) in (list, tuple):
        items = [_builder(item, counter) for item in structure]
        if any(item is None for item in items):
            return None
        kind = type(structure)
        return lambda flat: kind(item(flat) for item in items)  # type: ignore[misc]
    return None


def call_on_one_thread(
    function: Callable[..., Any], *args: Any, single_threaded: bool
) -> tuple[Any, bool]:
    """`function(*args)`, whose traced function calls run on one thread if `single_threaded`.

    For code that calls traced functions itself (a step's first run,
    before its compiled call exists). Falls back to the default executor
    when TensorFlow refuses the single-threaded one, which it does before
    running any op. Returns the result and whether it ran single-threaded.
    """
    if single_threaded:
        try:
            with function_calls.single_threaded_calls():
                return function(*args), True
        except (tf.errors.FailedPreconditionError, tf.errors.UnimplementedError) as error:
            if _REFUSAL not in str(error):
                raise
    return function(*args), False


# Functional control flow the single-threaded executor runs as long as it
# is not lowered to Switch/Merge (the attribute tf.function sets), and the
# ops a graph partitioned over devices sends and receives by.
_FUNCTIONAL_CONTROL_FLOW = frozenset(
    {"If", "StatelessIf", "While", "StatelessWhile", "Case", "StatelessCase"}
)
_LOWERING_ATTR = "_lower_using_switch_merge"
_PARTITION_OPS = ("_Send", "_Recv", "_HostSend", "_HostRecv")


def allows_single_thread(graph: tf.Graph, functional_control_flow: bool = False) -> bool:
    """Whether the single-threaded executor can run `graph` and its functions.

    True when the process has no accelerator and no op in the graph or the
    functions it calls is control flow or a collective, or is placed on a
    device other than this task's first CPU. With `functional_control_flow`,
    If/While/Case ops not marked for lowering are allowed too, and sends and
    receives between partitions are not.
    """
    if has_accelerators():
        return False
    graph_def = graph.as_graph_def()
    nodes = itertools.chain(
        graph_def.node, *(function.node_def for function in graph_def.library.function)
    )
    for node in nodes:
        if functional_control_flow and node.op in _FUNCTIONAL_CONTROL_FLOW:
            lowering = node.attr.get(_LOWERING_ATTR)
            if lowering is not None and lowering.b:
                return False
        elif not allows_node(node):
            return False
        elif functional_control_flow and node.op.startswith(_PARTITION_OPS):
            return False
    return True


def allows_node(node: Any) -> bool:
    """Whether a NodeDef is neither control flow nor a collective, and on the first CPU."""
    if node.op in _CONTROL_FLOW_OPS or node.op.startswith("Collective"):
        return False
    return not node.device or _is_first_cpu(node.device)


@functools.cache
def has_accelerators() -> bool:
    """Whether the process has a GPU or TPU (whose functions never run on one thread)."""
    return any(tf.config.list_logical_devices(kind) for kind in ("GPU", "TPU"))


@functools.cache
def _is_first_cpu(device: str) -> bool:
    spec = tf.DeviceSpec.from_string(device)
    return (
        spec.device_type in (None, "CPU")
        and spec.device_index in (None, 0)
        and spec.job in (None, "localhost")
        and spec.replica in (None, 0)
        and spec.task in (None, 0)
    )
