"""TensorFlow's own stock hooks handed to an Estimator: run as this package's.

In tf.estimator 2.15, `tf.estimator.StopAtStepHook` and the other stock hooks
were the `tf.compat.v1.train` classes, so programs made them under either
name. TensorFlow's classes still exist, but their methods need a TF1 session
(the global step's graph op, a `FileWriter`, a `Saver`). A hook of exactly
one of those classes is replaced, where the Estimator takes its hooks, by
this package's hook of the same name made with the same arguments
(`install()` makes the names themselves this package's classes). A subclass
is left as it is: its own methods may rely on TensorFlow's. The public
`HookCallback` does the same for the hooks it runs in Keras `fit`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from keras_estimator._src.engine import hook_callback
from keras_estimator._src.tf_internals import v1_session_hooks


def _package_class(name: str) -> Any:
    from keras_estimator._src.hooks import (
        basic_hooks,
        checkpoint_hooks,
        profiler_hook,
        summary_saver_hook,
    )

    for module in (basic_hooks, checkpoint_hooks, summary_saver_hook, profiler_hook):
        found = getattr(module, name, None)
        if found is not None:
            return found
    raise LookupError(name)


def as_package_hook(hook: Any) -> Any:
    """`hook`, or this package's hook standing for TensorFlow's stock `hook`."""
    stock = v1_session_hooks.stock_arguments(hook)
    if stock is None:
        return hook
    name, arguments = stock
    return _package_class(name)(**arguments)


def as_package_hooks(hooks: Iterable[Any]) -> list[Any]:
    """`as_package_hook` of each hook, in order."""
    return [as_package_hook(hook) for hook in hooks]


class HookCallback(hook_callback.HookCallback):
    __doc__ = hook_callback.HookCallback.__doc__

    def __init__(self, hooks: Iterable[Any]) -> None:
        super().__init__(as_package_hooks(hook_callback.check_hooks(hooks)))
