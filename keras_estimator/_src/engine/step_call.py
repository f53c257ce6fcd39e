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
"""

from __future__ import annotations

import functools
import itertools
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

    def __call__(self, *args: Any) -> Any:
        try:
            return function_calls.call_traced(
                self.concrete, *args, single_threaded=self.single_threaded
            )
        except (tf.errors.FailedPreconditionError, tf.errors.UnimplementedError) as error:
            if not self.single_threaded or _REFUSAL not in str(error):
                raise
        self.single_threaded = False
        return function_calls.call_traced(self.concrete, *args)


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
