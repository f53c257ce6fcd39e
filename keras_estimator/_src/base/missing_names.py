"""tf.estimator 2.15 names this package does not provide, and what to do.

Every public name of tf.estimator 2.15 is provided today, so the tables are
empty; a name ever left out goes here. A program that reaches one gets an AttributeError naming what it was and
the way forward, instead of Python's bare "module has no
attribute". Each public namespace module binds `__getattr__` to
`getattr_for(<its name>)`; any other missing name keeps Python's message.
"""

from __future__ import annotations

from collections.abc import Callable

# Public module -> {missing name: why and what to do}.
MISSING: dict[str, dict[str, str]] = {
    "keras_estimator": {},
    "keras_estimator.experimental": {},
    "keras_estimator.compat.estimator": {},
    "keras_estimator.compat.estimator.experimental": {},
    "keras_estimator.compat.estimator.inputs": {},
}

# Which tf.estimator namespace each module stands for, for the message.
_TF_NAMES = {
    "keras_estimator": "tf.estimator",
    "keras_estimator.experimental": "tf.estimator.experimental",
    "keras_estimator.compat.estimator": "tf.compat.v1.estimator",
    "keras_estimator.compat.estimator.experimental": "tf.compat.v1.estimator.experimental",
    "keras_estimator.compat.estimator.inputs": "tf.compat.v1.estimator.inputs",
}


def getattr_for(module_name: str) -> Callable[[str], object]:
    """A module `__getattr__` explaining the 2.15 names `module_name` lacks."""
    missing = MISSING[module_name]
    tf_name = _TF_NAMES[module_name]

    def __getattr__(name: str) -> object:
        reason = missing.get(name)
        if reason is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        raise AttributeError(
            f"{tf_name}.{name} of tf.estimator 2.15 is not in {module_name}: "
            f"{reason}. docs/differences.md lists what is not provided."
        )

    return __getattr__
