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
"""

from __future__ import annotations

import atexit
import queue
import threading
from typing import Any

_boxes: queue.SimpleQueue[list[Any]] = queue.SimpleQueue()
_lock = threading.Lock()
_worker: list[threading.Thread] = []


def release(box: list[Any]) -> None:
    """Drops the objects in `box` on the release thread.

    Args:
        box: a list holding the only references to the objects to free; the
            caller keeps no other reference to them (the box itself may be
            kept: it is emptied on the release thread).
    """
    if not box:
        return
    with _lock:
        if not _worker or not _worker[0].is_alive():
            thread = threading.Thread(
                target=_empty_boxes, name="keras_estimator.input_release", daemon=True
            )
            thread.start()
            if not _worker:
                atexit.register(_finish_at_exit)
            _worker[:] = [thread]
    _boxes.put(box)


def _finish_at_exit() -> None:
    wait_until_released(_EXIT_TIMEOUT_SECS)


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
