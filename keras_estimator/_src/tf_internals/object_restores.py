"""`tf.train.Checkpoint(...).restore(path)` in a model_fn: restored when the program runs it.

Checked on TensorFlow 2.21 (and the same in 2.15).

In tf.estimator 2.15 the model_fn built a graph, and a
`tf.train.Checkpoint(...).restore(path)` (or `.read(path)`) made there only
built restore ops: they ran when the program ran them, with
`status.run_restore_ops(session)` or `status.initialize_or_restore(session)`
in a Scaffold's `init_fn` (called on a fresh start), and otherwise never
(the model trained from its initializers). In a traced TF2 step the same
call fails inside TensorFlow ("Tensor is unhashable"). Inside `recording()`
such a call in the enclosed graph returns a `DeferredRestore` instead, and
nothing is read until the program asks, as in 2.15: its `run_restore_ops`
or `initialize_or_restore`, called eagerly from the init_fn, is
TensorFlow's eager restore, which assigns the objects' variables (the
Estimator's own, made by the model_fn's first trace). Assertions asked for
before then (`assert_consumed()`, `expect_partial()`, ...) are applied to
the restore when it happens.

Touched: `Checkpoint.restore` and `Checkpoint.read` (public methods,
replaced only while a graph is inside `recording()`; other graphs, threads
and eager code get TensorFlow's).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator._src.tf_internals import GraphScopedReplacement

TOUCHES = (
    "tensorflow.python.checkpoint.checkpoint:Checkpoint.restore",
    "tensorflow.python.checkpoint.checkpoint:Checkpoint.read",
)


class DeferredRestore:
    """What `Checkpoint.restore(path)` gives in a model_fn; see the module."""

    def __init__(self, restore: Callable[[], Any]) -> None:
        self._restore = restore
        self._asked: list[str] = []
        self._status: Any = None

    def run_restore_ops(self, session: Any = None) -> None:
        """Restores now (once), as 2.15's session ran the restore ops."""
        del session
        self._restored()

    def initialize_or_restore(self, session: Any = None) -> None:
        """As `run_restore_ops`: the variables are initialized already."""
        del session
        self._restored()

    def assert_consumed(self) -> DeferredRestore:
        return self._ask("assert_consumed")

    def assert_existing_objects_matched(self) -> DeferredRestore:
        return self._ask("assert_existing_objects_matched")

    def assert_nontrivial_match(self) -> DeferredRestore:
        return self._ask("assert_nontrivial_match")

    def expect_partial(self) -> DeferredRestore:
        return self._ask("expect_partial")

    def _ask(self, name: str) -> DeferredRestore:
        if self._status is None:
            self._asked.append(name)
        else:
            getattr(self._status, name)()
        return self

    def _restored(self) -> Any:
        if not tf.executing_eagerly():
            raise ValueError(
                "A tf.train.Checkpoint restore made in the model_fn ran inside the "
                "training step: restore it from a Scaffold's init_fn "
                "(Scaffold(init_fn=lambda scaffold, session: "
                "status.run_restore_ops(session))), as tf.estimator 2.15 ran it."
            )
        if self._status is None:
            self._status = self._restore()
            for name in self._asked:
                getattr(self._status, name)()
        return self._status


def _deferred_in_marked_graphs(original: Any, marks: Callable[[], list[Any]]) -> Any:
    def restore(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not marks():
            return original(self, *args, **kwargs)
        return DeferredRestore(lambda: original(self, *args, **kwargs))

    return restore


def _checkpoint_class() -> Any:
    return tf.train.Checkpoint


_REPLACEMENTS = tuple(
    GraphScopedReplacement(
        _checkpoint_class, name, _deferred_in_marked_graphs, "keras_estimator_restores"
    )
    for name in ("restore", "read")
)


@contextlib.contextmanager
def recording() -> Any:
    """Within: a Checkpoint restored in the current graph is restored later.

    Only in the enclosed graph (and the replica threads that trace into
    it); eagerly nothing changes.
    """
    with _REPLACEMENTS[0].scope(), _REPLACEMENTS[1].scope():
        yield
