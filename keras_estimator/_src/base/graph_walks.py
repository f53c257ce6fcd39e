"""What a graph computes something from: its ops, walked back from outputs."""

from __future__ import annotations

from collections.abc import Iterable, Set
from typing import Any

import tensorflow as tf


def ops_needed_by(roots: Iterable[Any], stop_at: Set[str] = frozenset()) -> set[str]:
    """Names of the ops `roots` (ops or tensors) need, through data and control inputs.

    The walk does not go past a tensor named in `stop_at` (a fed tensor: what
    computes it is not run), nor take in the op making it.
    """
    seen: set[str] = set()
    pending = [
        root if isinstance(root, tf.Operation) else root.op
        for root in roots
        if isinstance(root, tf.Operation) or root.name not in stop_at
    ]
    while pending:
        op = pending.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        pending.extend(t.op for t in op.inputs if t.name not in stop_at)
        pending.extend(op.control_inputs)
    return seen
