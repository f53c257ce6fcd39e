"""Keras' auto-naming counter and name-scope path.

Checked on Keras 3.15. Keras names layers from a process-wide counter
(`dense`, `dense_1`, ...). A model_fn is traced once per mode and again on
every retrace, and TF1-style checkpoints are keyed by variable name, so each
trace must see the counter start from zero, as each new TF1 graph did.
Keras exposes no public way to scope that counter; this module swaps it.

Private symbols touched: Keras' global-state attribute `object_name_uids`
(through `keras.src.backend.common.global_state`) and
`keras.src.backend.common.name_scope.current_path`.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Iterator

from keras.src.backend.common import global_state
from keras.src.backend.common.name_scope import current_path

TOUCHES = (
    "keras.src.backend.common.global_state:get_global_attribute",
    "keras.src.backend.common.global_state:set_global_attribute",
    "keras.src.backend.common.name_scope:current_path",
)

_NAME_COUNTER_KEY = "object_name_uids"


@contextlib.contextmanager
def fresh_layer_names() -> Iterator[None]:
    """Makes Keras auto-name objects as in a new program, then restores state."""
    saved = global_state.get_global_attribute(_NAME_COUNTER_KEY)
    global_state.set_global_attribute(
        _NAME_COUNTER_KEY, collections.defaultdict(int)
    )
    try:
        yield
    finally:
        global_state.set_global_attribute(_NAME_COUNTER_KEY, saved)


def keras_scope_path() -> str:
    """The Keras name-scope path (`"dense_1"`) active now, or ''.

    Keras 3 names a layer's variables by this path, not by TensorFlow's name
    scopes (which add `_1` suffixes of their own inside a graph).
    """
    return current_path()
