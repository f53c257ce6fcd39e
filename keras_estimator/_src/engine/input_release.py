"""Frees finished input iterators on a thread of their own.

Destroying a tf.data iterator (checked on TensorFlow 2.21) waits for its
autotuning thread to stop, and that thread only stops at the end of its
current sleep, which doubles while the input is read: 10 ms, 20 ms, ...,
1.28 s after 2.5 s of reading, up to a minute. Destroyed in the thread that
called `train()`, an iterator added up to 0.6 s to a 0.7 s call, at random.

The loop therefore hands each finished iterator here, in a box that holds
the only reference to it, and one daemon thread empties the boxes: the wait
happens there, and TensorFlow releases the GIL while it waits, so the caller
goes on at once. At exit the interpreter waits for that thread to finish
(the wait moves from `train()` to the end of the program, where it overlaps
whatever ran in between): it would otherwise stop the thread by unwinding
its stack, which aborts the process when it is inside TensorFlow.

Generators that hold an input iterator (`Estimator.predict`) may be left
unfinished: `gen = est.predict(input_fn); next(gen)`. Left open at exit, such
a generator would only be closed during interpreter finalization, after the
exit handler, where its `finally` hands the iterator here and starting the
thread never returns (Python 3.11 waits for a thread that can no longer run;
3.12 raises). `closed_at_exit` records each such generator, and the exit
handler closes those still open before it waits, so their iterators take
the usual path. Whatever is released after the exit handler started is freed
in the caller: no thread is started or waited for then.
"""

from __future__ import annotations

import atexit
import functools
import queue
import sys
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

_boxes: queue.SimpleQueue[list[Any]] = queue.SimpleQueue()
_lock = threading.Lock()
_worker: list[threading.Thread] = []
# Generators to close at exit if still open (see `closed_at_exit`).
_open_generators: weakref.WeakSet[Any] = weakref.WeakSet()
# Set once the exit handler ran (or the interpreter is finalizing): boxes are
# then emptied in the caller.
_exit_state = {"registered": False, "exiting": False}

_Generator = TypeVar("_Generator", bound=Callable[..., Iterator[Any]])


def release(box: list[Any]) -> None:
    """Drops the objects in `box` on the release thread.

    After the exit handler started, the objects are dropped in the caller
    instead, which waits as long as the release thread would have.

    Args:
        box: a list holding the only references to the objects to free; the
            caller keeps no other reference to them (the box itself may be
            kept: it is emptied on the release thread).
    """
    if not box:
        return
    with _lock:
        if not _exiting():
            _put(box)
            return
    box.clear()


def closed_at_exit(generator_function: _Generator) -> _Generator:
    """Makes each generator of `generator_function` closed at exit if open.

    The exit handler closes it (its `finally` blocks run then) before it
    waits for the release thread; a generator running in another thread at
    exit is left as it is.
    """

    @functools.wraps(generator_function)
    def tracked(*args: Any, **kwargs: Any) -> Iterator[Any]:
        generator = generator_function(*args, **kwargs)
        with _lock:
            _register_exit_handler()
            _open_generators.add(generator)
        return generator

    return tracked  # type: ignore[return-value]


def _exiting() -> bool:
    return _exit_state["exiting"] or sys.is_finalizing()


def _put(box: list[Any]) -> None:
    """Queues `box` for the release thread, started if needed (holds _lock)."""
    if not _worker or not _worker[0].is_alive():
        thread = threading.Thread(
            target=_empty_boxes, name="keras_estimator.input_release", daemon=True
        )
        thread.start()
        _worker[:] = [thread]
    _register_exit_handler()
    _boxes.put(box)


def _register_exit_handler() -> None:
    if not _exit_state["registered"]:
        atexit.register(_finish_at_exit)
        _exit_state["registered"] = True


def _finish_at_exit() -> None:
    with _lock:
        generators = list(_open_generators)
    for generator in generators:
        try:
            generator.close()
        except Exception:
            pass  # running in another thread, or its finally raised
    done = threading.Event()
    with _lock:
        _exit_state["exiting"] = True
        if _worker:
            _put([_Marker(done)])
        else:
            done.set()
    done.wait(_EXIT_TIMEOUT_SECS)


# TensorFlow's autotuning thread sleeps for at most a minute between runs.
_EXIT_TIMEOUT_SECS = 120.0


def wait_until_released(timeout: float) -> bool:
    """Blocks until every box handed over so far is emptied (for tests).

    Returns:
        Whether that happened within `timeout` seconds.
    """
    done = threading.Event()
    release([_Marker(done)])
    return done.wait(timeout)


class _Marker:
    """Sets an event when freed: everything queued before it is freed too."""

    def __init__(self, event: threading.Event) -> None:
        self._event = event

    def __del__(self) -> None:
        self._event.set()


def _empty_boxes() -> None:
    while True:
        box = _boxes.get()
        box.clear()
        del box
