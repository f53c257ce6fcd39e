"""TF1's global graph-mode switches, which an Estimator program no longer needs.

TF1-style Estimator programs often begin with
`tf.compat.v1.disable_eager_execution()` or `disable_v2_behavior()`. Here
model_fn and input_fn already run in graphs (traced functions) while the
Estimator itself needs eager execution; with it disabled, training would fail
deep inside TensorFlow. `install()` replaces both switches with
`keep_eager_on(...)`, which warns once and changes nothing; without
`install()`, `Estimator()` refuses to start with eager execution off.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, TypeVar

import tensorflow as tf

from keras_estimator._src.tf_internals import default_graph

F = TypeVar("F", bound=Callable[..., Any])

SWITCHES = ("disable_eager_execution", "disable_v2_behavior")


def keep_eager_on(name: str) -> Callable[..., None]:
    """A stand-in for `tf.compat.v1.<name>` that warns once and does nothing."""
    warned = False

    @functools.wraps(getattr(tf.compat.v1, name))
    def switch(*args: Any, **kwargs: Any) -> None:
        nonlocal warned
        if warned:
            return
        warned = True
        warnings.warn(
            f"tf.compat.v1.{name}() was called; keras_estimator.install() keeps "
            "eager execution (and TF2 behaviour) on, because model_fn and "
            "input_fn already run in graphs, as under tf.estimator. Remove the "
            "call to silence this warning.",
            UserWarning,
            stacklevel=2,
        )

    return switch


def check_eager_execution() -> None:
    """Raises if eager execution was disabled process-wide.

    Raises:
        ValueError: `tf.compat.v1.disable_eager_execution()` or
            `disable_v2_behavior()` was called.
    """
    if tf.compat.v1.executing_eagerly_outside_functions() or _eager_by_default():
        return
    raise ValueError(
        "Eager execution is disabled in this process: the program called "
        "tf.compat.v1.disable_eager_execution() or "
        "tf.compat.v1.disable_v2_behavior(). The Estimator needs eager "
        "execution (model_fn and input_fn still run in graphs, as under "
        "tf.estimator): remove that call, or call keras_estimator.install() "
        "before it, which makes it a no-op."
    )


def _eager_by_default() -> bool:
    """Whether a thread starting now executes eagerly.

    Inside `with tf.Graph().as_default():` this thread builds a graph, as
    tf.estimator 2.15 programs often do around `Estimator(...)`: that context
    is the caller's own, and only a process-wide switch counts. The default
    graph and the execution mode are per thread, so a new thread sees the
    process's mode alone.
    """
    answer: list[bool] = []
    thread = threading.Thread(
        target=lambda: answer.append(tf.compat.v1.executing_eagerly_outside_functions())
    )
    thread.start()
    thread.join()
    return bool(answer and answer[0])


def _in_callers_graph() -> bool:
    """Inside the program's own `with tf.Graph().as_default():`, eager execution on."""
    return not tf.executing_eagerly() and not tf.inside_function() and _eager_by_default()


def outside_callers_graph(method: F) -> F:
    """Runs `method` eagerly even when called in the program's own graph context.

    tf.estimator 2.15's train/evaluate/export built graphs of their own, so
    calling them inside `with tf.Graph().as_default():` ran.
    """

    @functools.wraps(method)
    def run(*args: Any, **kwargs: Any) -> Any:
        if not _in_callers_graph():
            return method(*args, **kwargs)
        with default_graph.outside_callers_graph():
            return method(*args, **kwargs)

    return run  # type: ignore[return-value]


def outside_callers_graph_each_step(generator_function: F) -> F:
    """`outside_callers_graph` for a generator (`predict()`): each of its steps.

    Decided when it is called: a generator made outside a graph context is
    returned as it is.
    """

    @functools.wraps(generator_function)
    def run(*args: Any, **kwargs: Any) -> Iterator[Any]:
        generator = generator_function(*args, **kwargs)
        if not _in_callers_graph():
            return generator
        return each_step_within(generator, default_graph.outside_callers_graph)

    return run  # type: ignore[return-value]


def each_step_within(
    generator: Iterator[Any], context: Callable[[], AbstractContextManager[Any]]
) -> Iterator[Any]:
    """`generator`'s items, each computed inside a new `context()`; closes it when done."""
    with contextlib.closing(generator):  # type: ignore[type-var]
        while True:
            with context():
                try:
                    item = next(generator)
                except StopIteration:
                    return
            yield item
