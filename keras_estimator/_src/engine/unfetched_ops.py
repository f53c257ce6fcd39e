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
    needed = _ancestors([*windows.roots, *fetched])
    return {
        op.name
        for op in candidates
        if op.name not in needed and not _made_by_keras(op)
    }


def _is_stateful(op: tf.Operation) -> bool:
    try:
        return bool(op.op_def.is_stateful)
    except (AttributeError, ValueError):
        return False


def _ancestors(roots: Iterable[Any]) -> set[str]:
    """Names of the ops `roots` need, through data and control inputs."""
    seen: set[str] = set()
    stack = [root if isinstance(root, tf.Operation) else root.op for root in roots]
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        stack.extend(tensor.op for tensor in op.inputs)
        stack.extend(op.control_inputs)
    return seen


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
