"""What hooks may know of the loop that runs them.

A hook such as CheckpointSaverHook needs the loop's variables (by their
checkpoint names) and global step. TF1 hooks found them in the default graph;
here the loop publishes them for the duration of a run with `active(...)`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterator, Sequence

import tensorflow as tf

_state = threading.local()


@dataclasses.dataclass(frozen=True)
class LoopContext:
    """The running loop, as hooks see it.

    Attributes:
        model_dir: the directory the loop checkpoints to (may be None).
        saveable: returns checkpoint name -> variable for everything a
            checkpoint holds (including `global_step`).
        global_step_variable: the int64 step variable.
        take_hook_variables: called with the variables hooks made in
            `begin()` (global ones, as 2.15's Saver saved them): the loop
            restores them from the checkpoint it started from and
            `saveable` holds them for the rest of the call. None: the loop
            keeps none.
    """

    model_dir: str | None
    saveable: Callable[[], dict[str, tf.Variable]]
    global_step_variable: tf.Variable
    take_hook_variables: Callable[[Sequence[tf.Variable]], None] | None = None

    def global_step(self) -> int:
        # value(): one read op (numpy() reads by read_value(), which adds an Identity).
        return int(self.global_step_variable.value().numpy())


def current() -> LoopContext | None:
    """The loop running on this thread, or None outside a loop."""
    return getattr(_state, "context", None)


@contextlib.contextmanager
def active(context: LoopContext) -> Iterator[LoopContext]:
    previous = current()
    _state.context = context
    try:
        yield context
    finally:
        _state.context = previous


def dispatching_hooks() -> bool:
    """Whether the hook dispatcher (`HookCallback`) is calling hooks' `begin()` on this thread.

    A stock hook whose `begin()` is called otherwise, in a graph, is run by a
    TF1 session (`tf.compat.v1.train.MonitoredSession`), not by this loop.
    """
    return getattr(_state, "dispatching", False)


@contextlib.contextmanager
def hook_dispatch() -> Iterator[None]:
    """Within: `dispatching_hooks()` is True on this thread."""
    previous = dispatching_hooks()
    _state.dispatching = True
    try:
        yield
    finally:
        _state.dispatching = previous
