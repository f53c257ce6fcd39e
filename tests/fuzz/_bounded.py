"""What every fuzzed call must do: finish in time, and succeed or fail clearly."""

from __future__ import annotations

import contextlib
import signal
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

CLEAR_ERRORS = (ValueError, TypeError, NotImplementedError)


class Hang(Exception):
    """A fuzzed call ran past its time bound."""


@contextlib.contextmanager
def time_bound(seconds: int) -> Iterator[None]:
    """Raises Hang in the block if it runs longer than `seconds` (main thread)."""

    def on_alarm(signum: int, frame: Any) -> None:
        raise Hang(f"call still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def succeeds_or_fails_clearly(
    call: Callable[[], Any], names: list[str], seconds: int = 60
) -> Any:
    """Runs `call`; returns its result, or None after a clear error.

    A clear error is a ValueError, TypeError or NotImplementedError (never one
    of TensorFlow's own errors, which subclass none of them but
    InvalidArgumentError's parents) whose message contains one of `names`.
    Anything else fails the test with the traceback.
    """
    try:
        with time_bound(seconds):
            return call()
    except CLEAR_ERRORS as error:
        message = str(error)
        assert not isinstance(error, tf.errors.OpError), traceback.format_exc()
        assert any(name in message for name in names), (names, message)
        return None
