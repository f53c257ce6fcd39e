"""TF1 summary ops that stay TF1 ops inside a marked trace graph.

Checked on TensorFlow 2.21.

`tf.compat.v1.summary.scalar/histogram/image/audio/text` turn into TF2
summary writes, returning an empty string, whenever a default `tf.summary`
writer and step are set. A model_fn traced with a default writer (to record
its `tf.summary.*` calls) would then build other ops, under other names, than
in its other traces, and a `SummarySaverHook(summary_op=...)` could not find
its op there. Inside `as_protos()`, these functions build the TF1 ops
(serialized `Summary` protos, collected in `GraphKeys.SUMMARIES`) as
tf.estimator 2.15's graph did. The switch is the module-level function each
of them calls; it has no public counterpart.

Private symbols touched: `tensorflow.python.summary.summary._should_invoke_v2_op`.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

TOUCHES = ("tensorflow.python.summary.summary:_should_invoke_v2_op",)

# A graph holding a token in this collection builds TF1 summary ops.
_MARK_COLLECTION = "keras_estimator_v1_summaries_as_protos"
# TensorFlow's function is replaced only while some trace is inside
# `as_protos()`, and put back when the last one leaves: outside those traces
# (and after training) TensorFlow's own function is in place.
_patch_lock = threading.Lock()
_patch_users = 0
_original: Any = None


def _module() -> Any:
    return importlib.import_module("tensorflow.python.summary.summary")


def _acquire() -> None:
    global _patch_users, _original
    with _patch_lock:
        if _patch_users == 0:
            module = _module()
            original = module._should_invoke_v2_op

            def should_invoke_v2_op() -> bool:
                graph = tf.compat.v1.get_default_graph()
                if graph.get_collection(_MARK_COLLECTION):
                    return False
                return bool(original())

            _original = original
            module._should_invoke_v2_op = should_invoke_v2_op
        _patch_users += 1


def _release() -> None:
    global _patch_users, _original
    with _patch_lock:
        _patch_users -= 1
        if _patch_users == 0:
            _module()._should_invoke_v2_op = _original
            _original = None


def is_patched() -> bool:
    """Whether TensorFlow's function is replaced right now (for tests)."""
    return _patch_users > 0


@contextlib.contextmanager
def as_protos() -> Iterator[None]:
    """TF1 summary calls in the enclosed trace build TF1 summary ops.

    Eagerly nothing changes (TF1 summary ops cannot be collected there).
    Replica threads tracing into the same graph each hold their own token;
    other threads, and other graphs, keep TensorFlow's behaviour.
    """
    if tf.executing_eagerly():
        yield
        return
    graph = tf.compat.v1.get_default_graph()
    token = object()
    _acquire()
    graph.add_to_collection(_MARK_COLLECTION, token)
    try:
        yield
    finally:
        marks = graph.get_collection_ref(_MARK_COLLECTION)
        if token in marks:
            marks.remove(token)
        _release()
