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
from collections.abc import Callable
from typing import Any

from keras_estimator._src.tf_internals import GraphScopedReplacement

TOUCHES = ("tensorflow.python.summary.summary:_should_invoke_v2_op",)


def _module() -> Any:
    return importlib.import_module("tensorflow.python.summary.summary")


def _v1_ops_in_marked_graphs(original: Any, marks: Callable[[], list[Any]]) -> Any:
    def should_invoke_v2_op() -> bool:
        if marks():
            return False
        return bool(original())

    return should_invoke_v2_op


# A graph holding a token in this collection builds TF1 summary ops.
_REPLACEMENT = GraphScopedReplacement(
    _module,
    "_should_invoke_v2_op",
    _v1_ops_in_marked_graphs,
    "keras_estimator_v1_summaries_as_protos",
)


def is_patched() -> bool:
    """Whether TensorFlow's function is replaced right now (for tests)."""
    return _REPLACEMENT.active


def as_protos() -> contextlib.AbstractContextManager[None]:
    """TF1 summary calls in the enclosed trace build TF1 summary ops.

    Eagerly nothing changes (TF1 summary ops cannot be collected there).
    Replica threads tracing into the same graph each hold their own token;
    other threads, and other graphs, keep TensorFlow's behaviour.
    """
    return _REPLACEMENT.scope()
