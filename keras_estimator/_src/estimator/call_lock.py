"""Calls of one Estimator made from several threads run one at a time.

tf.estimator 2.15 gave every call a graph and a session of its own, so two
threads could evaluate, or train and evaluate, the same Estimator object
side by side. Here the calls share the Estimator's variables and its metric
state: two evaluations at once would add into each other's metrics, and an
evaluation restoring a checkpoint would move the weights another thread is
training. So a call made while another thread's call of the same Estimator
runs waits for it, and says so in the log. Calls made from inside a call in
the same thread (a hook's evaluate or predict) run at once. A `predict()`
generator holds the Estimator only while it computes a batch.

An Estimator made for each thread, on the same model_dir, runs its calls
side by side as 2.15's did.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from keras_estimator._src.base import graph_mode

logger = logging.getLogger("keras_estimator")

F = TypeVar("F", bound=Callable[..., Any])


class CallLock:
    """Held by the thread running a call of one Estimator; reentrant."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._running: str | None = None

    @contextlib.contextmanager
    def held(self, call: str) -> Iterator[None]:
        if not self.lock.acquire(blocking=False):
            logger.warning(
                "%s() waits for the %s() another thread is running on the same "
                "Estimator: the calls of one Estimator share its variables and "
                "run one at a time. To run them side by side, give each thread "
                "an Estimator of its own on the same model_dir.",
                call,
                self._running or "call",
            )
            self.lock.acquire()
        outer = self._running
        self._running = outer or call
        try:
            yield
        finally:
            self._running = outer
            self.lock.release()


def one_at_a_time(method: F) -> F:
    """Runs an Estimator method holding the Estimator's `CallLock`."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._calls.held(method.__name__):
            return method(self, *args, **kwargs)

    return run  # type: ignore[return-value]


def each_step_one_at_a_time(generator_function: F) -> F:
    """`one_at_a_time` for a generator method: each step of the generator."""

    @functools.wraps(generator_function)
    def run(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        generator = generator_function(self, *args, **kwargs)
        name = generator_function.__name__
        return graph_mode.each_step_within(generator, lambda: self._calls.held(name))

    return run  # type: ignore[return-value]
