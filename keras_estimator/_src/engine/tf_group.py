"""`tf.group` of a Keras 3 optimizer's `apply_gradients` result in a model_fn.

Programs written for TensorFlow 2.x build their train op as
`tf.group(optimizer.apply_gradients(...), global_step.assign_add(1))`. A
Keras 2 optimizer returned an operation there; a Keras 3 optimizer returns
its `iterations` variable, a Keras variable, which `tf.group` refuses
("'inputs' should be zero or more (nested) Tensors"). In a model_fn called by
this package the value is grouped as a read of that variable, traced after
the update, so the group waits for it as it waited for Keras 2's operation.

While some thread calls a model_fn, `tf.group` of the public namespaces
(`tf`, `tf.compat.v1`, `tf.compat.v2`) is this module's function; it changes
nothing for other threads or for inputs that are not Keras variables, and
TensorFlow's own function is put back when no thread is inside a model_fn.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import Any

import keras
import tensorflow as tf

_lock = threading.Lock()
_users = [0]
_replaced: list[tuple[Any, Any]] = []  # (module, TensorFlow's group)
_active = threading.local()


@contextlib.contextmanager
def accept_keras_variables() -> Iterator[None]:
    """Lets `tf.group` called by this thread meanwhile take Keras variables."""
    with _lock:
        if not _users[0]:
            _replace_group()
        _users[0] += 1
    depth = getattr(_active, "depth", 0)
    _active.depth = depth + 1
    try:
        yield
    finally:
        _active.depth = depth
        with _lock:
            _users[0] -= 1
            if not _users[0]:
                while _replaced:
                    module, original = _replaced.pop()
                    module.group = original


def _replace_group() -> None:
    original = tf.group

    def group(*inputs: Any, **kwargs: Any) -> Any:
        if getattr(_active, "depth", 0):
            inputs = tf.nest.map_structure(_groupable, inputs)
        return original(*inputs, **kwargs)

    group.__doc__ = original.__doc__
    group.__wrapped__ = original  # type: ignore[attr-defined]
    for name, module in list(sys.modules.items()):
        public = name == "tensorflow" or name.startswith("tensorflow._api.")
        if public and getattr(module, "group", None) is original:
            module.group = group  # type: ignore[attr-defined]
            _replaced.append((module, original))


def _groupable(value: Any) -> Any:
    if isinstance(value, keras.Variable):
        return tf.convert_to_tensor(value)
    return value
