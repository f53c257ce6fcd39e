"""The stateful ops of a TRAIN model_fn that a TF1 session would not have run.

tf.estimator's training session ran the train_op, the loss and what hooks
fetched, with the ops those depend on; any other op the model_fn built was
left alone. Programs rely on that, knowingly or not: a
`tf.compat.v1.layers.batch_normalization` whose `UPDATE_OPS` the train_op
does not wait for kept its moving averages at their initial values, and an
`assign_add` built but never fetched counted nothing. A traced step runs
every stateful op it holds (automatic control dependencies list them as the
function's control outputs), so such ops are found here while the step is
traced, before those dependencies are added, and the step's functions prune
them out.

Two kinds of op are kept although nothing fetched depends on them: those
built outside the model_fn (the step's own updates), and the updates Keras 3
layers and metrics make inside their `call` or `update_state` (a
`keras.layers.BatchNormalization`'s moving averages): Keras 3 runs them with
the call, and gives no other way to run them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.base import graph_walks
from keras_estimator._src.tf_internals import control_edges

_TENSORFLOW_DIR = os.path.dirname(tf.__file__) + os.sep
_KERAS_DIR = os.path.join(os.path.dirname(keras.__file__), "src") + os.sep
# Keras' variable and op code, reached from a user's call as well as a layer's.
_KERAS_PLUMBING = tuple(os.path.join(_KERAS_DIR, part) + os.sep for part in ("backend", "ops"))


class Windows:
    """Where the model_fn's calls put their ops in a graph being traced.

    Attributes:
        spans: (graph, first op index, end op index) of each call.
        roots: what each call's spec makes a session run (loss, train_op).
    """

    def __init__(self) -> None:
        self.spans: list[tuple[Any, int, int]] = []
        self.roots: list[Any] = []

    def add(self, graph: Any, first_op: int, spec: Any) -> None:
        """Records a TRAIN call of the model_fn that built `graph`'s ops from `first_op`."""
        self.spans.append((graph, first_op, len(graph.get_operations())))
        for root in (getattr(spec, "loss", None), getattr(spec, "train_op", None)):
            if isinstance(root, (tf.Tensor, tf.Operation)):
                self.roots.append(root)


def left_out(graph: Any, windows: Windows, fetched: Iterable[Any]) -> set[str]:
    """Names of the stateful ops of the model_fn's calls nothing run depends on.

    Call while the step is traced, before its automatic control dependencies
    are added: only the model_fn's own data and control edges count.

    Args:
        graph: the graph of the step being traced.
        windows: the model_fn's calls in it.
        fetched: what the step returns (its logs, the loss, reads), tensors
            or ops.
    """
    candidates = [
        op
        for span_graph, first, end in windows.spans
        if span_graph is graph
        for op in graph.get_operations()[first:end]
        if _is_stateful(op)
    ]
    if not candidates:
        return set()
    needed = graph_walks.ops_needed_by([*windows.roots, *fetched])
    return {
        op.name
        for op in candidates
        if op.name not in needed and not _made_by_keras(op)
    }


# Stateful ops that only read: leaving them out changes nothing, and a read
# a summary or a hook fetches must keep its place before the step's updates.
_READS = frozenset(
    {
        "ReadVariableOp",
        "ResourceGather",
        "ResourceGatherNd",
        "VarIsInitializedOp",
        "VariableShape",
        "LookupTableFindV2",
        "LookupTableSizeV2",
        "LookupTableExportV2",
    }
)


def _is_stateful(op: tf.Operation) -> bool:
    if op.type in _READS:
        return False
    try:
        return bool(op.op_def.is_stateful)
    except (AttributeError, ValueError):
        return False


def _made_by_keras(op: tf.Operation) -> bool:
    """Whether a Keras layer's, metric's or optimizer's own code built `op`.

    The innermost frame outside TensorFlow and Keras' variable and op code
    tells: a user's `variable.assign(...)` is the user's, a
    `BatchNormalization.call` Keras'.
    """
    for frame in reversed(list(op.traceback)):
        filename = frame.filename
        if filename.startswith(_TENSORFLOW_DIR) or filename.startswith(_KERAS_PLUMBING):
            continue
        return filename.startswith(_KERAS_DIR)
    return False


def control_inputs_now(graph: Any) -> dict[str, frozenset[str]]:
    """Each op's control inputs by name, before automatic ones are added."""
    return {
        op.name: frozenset(dependency.name for dependency in op.control_inputs)
        for op in graph.get_operations()
        if op.control_inputs
    }


def detach(graph: Any, left_out: set[str], before: dict[str, frozenset[str]]) -> None:
    """Takes the left-out ops off the order automatic control dependencies made.

    A traced step makes an op on a variable wait for the ops the model_fn
    built on it before (a read waits for an `assign_add` built above it): an
    op left out would then run anyway, for whatever waits on it. Such an
    edge (one the op did not have before, `before`) is replaced by the ops
    the left-out op itself waited for, so kept ops keep their order among
    themselves and a left-out op runs only when fetched, unordered against
    the rest as in a TF1 session.
    """
    if not left_out:
        return
    by_name = {op.name: op for op in graph.get_operations()}
    bypass: dict[str, list[tf.Operation]] = {}

    def waited_for(name: str) -> list[tf.Operation]:
        if name not in bypass:
            bypass[name] = []
            kept = []
            for dependency in by_name[name].control_inputs:
                if dependency.name in left_out:
                    kept.extend(waited_for(dependency.name))
                else:
                    kept.append(dependency)
            bypass[name] = kept
        return bypass[name]

    for op in graph.get_operations():
        if op.name in left_out:
            continue
        own = before.get(op.name, frozenset())
        dependencies = op.control_inputs
        if not any(d.name in left_out and d.name not in own for d in dependencies):
            continue
        replaced: list[tf.Operation] = []
        for dependency in dependencies:
            if dependency.name in left_out and dependency.name not in own:
                replaced.extend(waited_for(dependency.name))
            else:
                replaced.append(dependency)
        unique = list({id(d): d for d in replaced}.values())
        control_edges.replace_control_inputs(op, unique)
