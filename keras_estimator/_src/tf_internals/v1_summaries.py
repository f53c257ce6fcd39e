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
_install_lock = threading.Lock()
_installed = False


def _install() -> None:
    global _installed
    with _install_lock:
        if _installed:
            return
        module: Any = importlib.import_module("tensorflow.python.summary.summary")
        original = module._should_invoke_v2_op

        def should_invoke_v2_op() -> bool:
            if tf.compat.v1.get_default_graph().get_collection(_MARK_COLLECTION):
                return False
            return bool(original())

        module._should_invoke_v2_op = should_invoke_v2_op
        _installed = True


@contextlib.contextmanager
def as_protos() -> Iterator[None]:
    """TF1 summary calls in the enclosed trace build TF1 summary ops.

    Eagerly nothing changes (TF1 summary ops cannot be collected there).
    Replica threads tracing into the same graph each hold their own token.
    """
    if tf.executing_eagerly():
        yield
        return
    _install()
    graph = tf.compat.v1.get_default_graph()
    token = object()
    graph.add_to_collection(_MARK_COLLECTION, token)
    try:
        yield
    finally:
        marks = graph.get_collection_ref(_MARK_COLLECTION)
        if token in marks:
            marks.remove(token)
