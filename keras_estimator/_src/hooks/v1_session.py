"""Stock hooks run by a TF1 session: TensorFlow's hook of the same name behind them.

tf.estimator 2.15's stock hooks (`tf.estimator.LoggingTensorHook`, ...) were
the `tf.compat.v1.train` classes, and `install()` makes those names this
package's classes. A program may still hand one to a TF1 session driver,
`tf.compat.v1.train.MonitoredSession` / `MonitoredTrainingSession` or
`SingularMonitoredSession`, in a graph of its own; such a driver calls the
hook with a `tf.compat.v1.Session`, its own run contexts (no global step
read for the hook) and its own Saver and summary writers, which this
package's hooks do not speak.

So a stock hook whose `begin()` is called by anything but this package's
hook dispatcher while a graph is being built makes TensorFlow's hook of
its class name, with the arguments it was made with, and forwards
`begin`, `after_create_session`, `before_run`, `after_run` and `end` to it
until its next `begin()`: it behaves as 2.15's hook did there. TensorFlow's
`NanLossDuringTrainingError` is raised as this package's (the class
`tf.compat.v1.train.NanLossDuringTrainingError` names once installed).
In `Estimator.train/evaluate/predict` and under `HookCallback` the hook's
own methods run, as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import tensorflow as tf

from keras_estimator._src.engine import loop_context
from keras_estimator._src.tf_internals import v1_session_hooks

_HookClass = TypeVar("_HookClass", bound=type)
_FORWARDED = ("after_create_session", "before_run", "after_run", "end")


def tf_hook_of(hook: Any) -> Any:
    """The TensorFlow hook a TF1 session is running behind `hook`, or None."""
    return hook.__dict__.get("_v1_session_hook")


def runs_tf_hook_in_v1_sessions(cls: _HookClass) -> _HookClass:
    """Class decorator: in a TF1 session, TensorFlow's hook of `cls`'s name runs."""
    tf_class_name = cls.__name__
    own_init: Callable[..., None] = getattr(cls, "__init__")  # noqa: B009

    @functools.wraps(own_init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        self._v1_session_arguments = (args, kwargs)
        self._v1_session_hook = None
        own_init(self, *args, **kwargs)

    own_begin: Callable[[Any], None] = getattr(cls, "begin")  # noqa: B009

    @functools.wraps(own_begin)
    def begin(self: Any) -> None:
        self._v1_session_hook = None
        if loop_context.dispatching_hooks() or tf.executing_eagerly():
            own_begin(self)
            return
        args, kwargs = self.__dict__.get("_v1_session_arguments", ((), {}))
        self._v1_session_hook = v1_session_hooks.tf_hook_class(tf_class_name)(*args, **kwargs)
        _forwarded(self._v1_session_hook.begin)

    setattr(cls, "__init__", __init__)  # noqa: B010  (mypy: no assignment to a method)
    setattr(cls, "begin", begin)  # noqa: B010
    for name in _FORWARDED:
        setattr(cls, name, _forwarding(name, getattr(cls, name)))
    return cls


def _forwarding(name: str, own: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(own)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        hook = tf_hook_of(self)
        if hook is None:
            return own(self, *args, **kwargs)
        return _forwarded(getattr(hook, name), *args, **kwargs)

    return method


def _forwarded(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return method(*args, **kwargs)
    except v1_session_hooks.tf_nan_loss_error() as error:
        from keras_estimator._src.hooks.basic_hooks import NanLossDuringTrainingError

        raise NanLossDuringTrainingError() from error
