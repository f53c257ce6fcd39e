"""Every touch of private TensorFlow and Keras state, each with the version it was checked on.

One module per topic; each names the private symbols it relies on in its
`TOUCHES` tuple, which `tests/tf_internals/test_tf_internals.py` checks still
exist. `GraphScopedReplacement`, the one mechanism several of them share,
lives here: it touches nothing of its own.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any


class GraphScopedReplacement:
    """Replaces one attribute of TensorFlow's while some graph is inside `scope()`.

    The first scope to enter puts `make(original, marks)` in place of
    `getattr(owner(), attribute)`; the last to leave puts TensorFlow's
    back, so outside every scope (and after training) TensorFlow's own
    object is in place. The replacement is in place for every thread, so
    it must behave as TensorFlow's wherever `marks()` is empty: `marks()`
    lists what the scopes of the current default graph put in (replica
    threads tracing into that graph see them; other graphs do not).

    Args:
        owner: returns the module or class holding the attribute.
        attribute: the attribute's name.
        make: `make(original, marks)` returns the replacement.
        collection: the graph collection the scopes' marks go in.
    """

    def __init__(
        self,
        owner: Callable[[], Any],
        attribute: str,
        make: Callable[[Any, Callable[[], list[Any]]], Any],
        collection: str,
    ) -> None:
        self._owner = owner
        self._attribute = attribute
        self._make = make
        self._collection = collection
        self._lock = threading.Lock()
        self._users = 0
        self._original: Any = None

    @property
    def active(self) -> bool:
        """Whether the replacement is in place right now."""
        return self._users > 0

    def marks(self) -> list[Any]:
        """What scopes of the current default graph put in (empty: none is open)."""
        import tensorflow as tf

        return tf.compat.v1.get_default_graph().get_collection(self._collection)

    @contextlib.contextmanager
    def scope(self, mark: Any = None) -> Iterator[None]:
        """Within: the current graph holds `mark` (or a token) in `marks()`.

        Eagerly nothing changes.
        """
        import tensorflow as tf

        if tf.executing_eagerly():
            yield
            return
        graph = tf.compat.v1.get_default_graph()
        token = object() if mark is None else mark
        self._acquire()
        graph.add_to_collection(self._collection, token)
        try:
            yield
        finally:
            marks = graph.get_collection_ref(self._collection)
            marks[:] = [entry for entry in marks if entry is not token]
            self._release()

    def _acquire(self) -> None:
        with self._lock:
            if self._users == 0:
                owner = self._owner()
                original = getattr(owner, self._attribute)
                setattr(owner, self._attribute, self._make(original, self.marks))
                self._original = original
            self._users += 1

    def _release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0:
                setattr(self._owner(), self._attribute, self._original)
                self._original = None
