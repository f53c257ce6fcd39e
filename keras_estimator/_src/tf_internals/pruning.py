"""What `WrappedFunction.prune` raises for fetches it cannot take alone.

Checked on TensorFlow 2.21. Pruning a wrapped function to fetches without
feeds lifts their subgraph into a new graph; a fetch that depends on the
function's inputs (a metric value computed from the batch, such as
`(tf.reduce_max(logits), tf.no_op())` in `eval_metric_ops`) cannot be
lifted, and TensorFlow says so with `op_selector.UnliftableError`, which no
public module exports. Other refusals come as ValueError, TypeError or
InvalidArgumentError.

Private symbol touched: `op_selector.UnliftableError`.
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.ops import op_selector

TOUCHES = ("tensorflow.python.ops.op_selector:UnliftableError",)

PRUNE_ERRORS: tuple[type[Exception], ...] = (
    ValueError,
    TypeError,
    tf.errors.InvalidArgumentError,
    op_selector.UnliftableError,
)
