"""The one place that touches private Keras and TensorFlow state.

Checked on TensorFlow 2.21 and Keras 3.15.

TF1's `variable_scope` likewise keeps its `default_name` counters (which
give `dense`, `dense_1` to `tf.compat.v1.layers`-style code) in a graph
collection that TF2 traces share; `fresh_variable_scopes` gives each trace
its own, as each TF1 graph had.

Checked on Keras 3.15. Keras names layers from a process-wide counter
(`dense`, `dense_1`, ...). A model_fn is traced once per mode and again on
every retrace, and TF1-style checkpoints are keyed by variable name, so each
trace must see the counter start from zero, as each new TF1 graph did.
Keras exposes no public way to scope that counter; this module swaps it.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Iterator

from keras.src.backend.common import global_state
from keras.src.backend.common.name_scope import current_path

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


# Graph-collection keys where tf.compat.v1.variable_scope keeps its scope
# counters and get_variable its name -> variable table.
_VARIABLE_SCOPE_KEYS = (("__varscope",), ("__variable_store",))


@contextlib.contextmanager
def fresh_variable_scopes() -> Iterator[None]:
    """Makes `variable_scope(default_name=...)` count from zero, then restores."""
    import tensorflow as tf

    saved = {}
    for key in _VARIABLE_SCOPE_KEYS:
        stores = tf.compat.v1.get_collection_ref(key)
        saved[key] = list(stores)
        del stores[:]
    try:
        yield
    finally:
        for key, content in saved.items():
            tf.compat.v1.get_collection_ref(key)[:] = content
