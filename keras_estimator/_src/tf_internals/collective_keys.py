"""Collective keys of their own for each MirroredStrategy an Estimator runs on.

Checked on TensorFlow 2.21. Every `tf.distribute.MirroredStrategy` numbers
its all-reduce collectives from the same start: group key 1 for its devices,
instance keys from 100 (`MirroredExtended._collective_key_base` is 0 for all
of them). The process's collective executor remembers each (group, instance)
it ran, so a second MirroredStrategy on the same devices, whose first
all-reduce has another shape than the first strategy's had, fails with
"Shape mismatch in the collective instance 100". Two Estimators each given
`MirroredStrategy()` in one process (or a Keras model trained before on
another one) hit it.

`own_keys(strategy)` gives a MirroredStrategy that has not run a collective
yet a group-key range no other strategy uses, by rebuilding its collective
all-reduce from a new `_collective_key_base`. A strategy that already ran
collectives keeps its keys (they are in use), as does every other strategy
type (MultiWorkerMirroredStrategy's keys must agree across workers).
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any

import tensorflow as tf

TOUCHES = (
    "tensorflow.python.distribute.mirrored_strategy:MirroredExtended"
    "._make_collective_ops_with_fallbacks",
    "tensorflow.python.distribute.mirrored_strategy:MirroredExtended()._collective_key_base",
    "tensorflow.python.distribute.mirrored_strategy:MirroredExtended()._collective_keys",
    "tensorflow.python.distribute.mirrored_strategy:MirroredExtended()._collective_ops",
    "tensorflow.python.distribute.mirrored_strategy:MirroredExtended()._cross_device_ops",
    "tensorflow.python.distribute.cross_device_utils:CollectiveKeys()._instance_key_table",
    "tensorflow.python.distribute.cross_device_utils:CollectiveKeys",
    "tensorflow.python.distribute.cross_device_utils:INSTANCE_KEY_START_NUMBER",
)

# Far above the group keys strategies number from by default (1, 2, ...).
_KEY_RANGE = 100_000
_bases = itertools.count(1)
_lock = threading.Lock()
_rekeyed: weakref.WeakSet[Any] = weakref.WeakSet()


def own_keys(strategy: Any) -> bool:
    """Moves an unused MirroredStrategy's collectives to keys of their own.

    Returns:
        Whether the strategy's keys were changed.
    """
    from tensorflow.python.distribute import cross_device_utils

    if type(strategy) is not tf.distribute.MirroredStrategy:
        return False
    extended = strategy.extended
    keys = getattr(extended, "_collective_keys", None)
    rebuild = getattr(extended, "_make_collective_ops_with_fallbacks", None)
    if keys is None or rebuild is None:
        return False
    with _lock:
        if strategy in _rekeyed:
            return False
        start = cross_device_utils.INSTANCE_KEY_START_NUMBER
        table = getattr(keys, "_instance_key_table", {})
        if any(key != start for devices in table.values() for key in devices.values()):
            return False  # it ran collectives: its keys are in use
        old_ops = extended._collective_ops
        extended._collective_key_base = _KEY_RANGE * next(_bases)
        extended._collective_ops = rebuild()
        if extended._cross_device_ops is old_ops:
            extended._cross_device_ops = extended._collective_ops
        _rekeyed.add(strategy)
    return True
