"""Keras-style variable management for layer classes: the switch and its scope.

TF1 let a program opt out of variable sharing by scope for the layers it
made: inside `keras_style_scope()` (or everywhere after `set_keras_style()`),
a layer refuses the `scope` / `reuse` arguments that share variables by name.
Here every layer object already opens a variable scope made unique per graph
from its name (`model`, then `model_1`, ...) and reuses only its own
variables, so the switch adds that refusal; the layers' variables are still
made with `tf.compat.v1.get_variable` and keep TF1's names.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

# Set for good by `set_keras_style()`.
_global_style = False
# Entered `keras_style_scope()` blocks, per thread (TF1 kept one flag; a
# thread-local count keeps one thread's block from leaking into another).
_scopes = threading.local()


def is_keras_style() -> bool:
    """Whether layers constructed now use Keras-style variable management."""
    return _global_style or getattr(_scopes, "depth", 0) > 0


@contextlib.contextmanager
def keras_style_scope() -> Iterator[None]:
    """Layers constructed inside this block use Keras-style variables.

    Each such layer gets variables of its own, in a variable scope made unique
    per graph from its name; constructing one with a `_scope` or `_reuse`
    (which the functional forms pass for `name` and `reuse`) raises
    ValueError.

    Example:
        >>> from keras_estimator.compat import layers  # doctest: +SKIP
        >>> with layers.experimental.keras_style_scope():  # doctest: +SKIP
        ...     first = layers.Dense(4, name="head")
        ...     second = layers.Dense(4, name="head")  # no clash when called

    Yields:
        None.
    """
    _scopes.depth = getattr(_scopes, "depth", 0) + 1
    try:
        yield
    finally:
        _scopes.depth -= 1


def set_keras_style() -> None:
    """Makes every layer constructed from now on use Keras-style variables.

    As in TF1, this cannot be undone in the process; prefer
    `keras_style_scope()` to limit it to a block.
    """
    global _global_style
    _global_style = True
