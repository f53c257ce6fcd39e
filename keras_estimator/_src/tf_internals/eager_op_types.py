"""Which ops of some types a block of code ran eagerly, in its thread.

Checked on TensorFlow 2.21 (the same in 2.15). `op_callbacks.add_op_callback`
registers a callback, in the calling thread only, that TensorFlow calls
after each op it runs eagerly (with `graph` None) and after each op it adds
to a graph (with that graph); `remove_op_callback` takes it off. A callback
returning None changes nothing. Adding the first callback in a thread also
routes TensorFlow's slow eager path through `execute_with_callbacks` (a
module-level switch), which removing the thread's last one undoes.

Private symbols touched: `op_callbacks.add_op_callback` and
`op_callbacks.remove_op_callback`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

TOUCHES = (
    "tensorflow.python.framework.op_callbacks:add_op_callback",
    "tensorflow.python.framework.op_callbacks:remove_op_callback",
)


@contextlib.contextmanager
def eager_ops_of_types(op_types: frozenset[str]) -> Iterator[set[str]]:
    """Yields the set, filled as the block runs, of `op_types` it ran eagerly.

    Ops added to graphs meanwhile (a `Dataset.map` function traced, say)
    are not counted: only ops executed then and there.
    """
    from tensorflow.python.framework import op_callbacks

    seen: set[str] = set()

    def note(
        op_type: Any, inputs: Any, attrs: Any, outputs: Any, op_name: Any = None, graph: Any = None
    ) -> None:
        del inputs, attrs, outputs, op_name
        if isinstance(op_type, bytes):  # TensorFlow's slow eager path names ops in bytes
            op_type = op_type.decode()
        if graph is None and op_type in op_types:
            seen.add(op_type)

    op_callbacks.add_op_callback(note)
    try:
        yield seen
    finally:
        op_callbacks.remove_op_callback(note)
