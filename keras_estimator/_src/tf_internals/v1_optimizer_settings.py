"""The settings a `tf.compat.v1.train` optimizer was made with.

Checked on TensorFlow 2.21 (and 2.15: these classes have not changed since
TF 1.15). A v1 optimizer keeps its constructor arguments in private
attributes (`_learning_rate`, `_initial_accumulator_value`, ...; Adam and
Adadelta keep the learning rate as `_lr`) and has no public getter, so the
v1 canned estimators read them there to carry an optimizer instance's
settings over.

Private symbols touched: those attributes of the nine optimizer classes in
`_ATTRIBUTES`, Ftrl's `_accum_name` / `_linear_name` (the names of its
slots), the base class's update methods (`updates_nothing`, `tf_kind`) and
its `_name`, which names the slots it makes (`slots_named_under`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

# Class name -> (its module, {constructor argument: the attribute holding it}).
_ATTRIBUTES: dict[str, tuple[str, dict[str, str]]] = {
    "AdagradOptimizer": (
        "adagrad",
        {
            "learning_rate": "_learning_rate",
            "initial_accumulator_value": "_initial_accumulator_value",
        },
    ),
    "AdamOptimizer": (
        "adam",
        {"learning_rate": "_lr", "beta1": "_beta1", "beta2": "_beta2", "epsilon": "_epsilon"},
    ),
    "FtrlOptimizer": (
        "ftrl",
        {
            name: f"_{name}"
            for name in (
                "learning_rate",
                "learning_rate_power",
                "initial_accumulator_value",
                "l1_regularization_strength",
                "l2_regularization_strength",
                "l2_shrinkage_regularization_strength",
                "beta",
            )
        },
    ),
    "RMSPropOptimizer": (
        "rmsprop",
        {
            name: f"_{name}"
            for name in ("learning_rate", "decay", "momentum", "epsilon", "centered")
        },
    ),
    "GradientDescentOptimizer": ("gradient_descent", {"learning_rate": "_learning_rate"}),
    "MomentumOptimizer": (
        "momentum",
        {name: f"_{name}" for name in ("learning_rate", "momentum", "use_nesterov")},
    ),
    "ProximalAdagradOptimizer": (
        "proximal_adagrad",
        {
            name: f"_{name}"
            for name in (
                "learning_rate",
                "initial_accumulator_value",
                "l1_regularization_strength",
                "l2_regularization_strength",
            )
        },
    ),
    "ProximalGradientDescentOptimizer": (
        "proximal_gradient_descent",
        {
            name: f"_{name}"
            for name in (
                "learning_rate",
                "l1_regularization_strength",
                "l2_regularization_strength",
            )
        },
    ),
    "AdadeltaOptimizer": (
        "adadelta",
        {"learning_rate": "_lr", "rho": "_rho", "epsilon": "_epsilon"},
    ),
}
# Ftrl's slots and the attribute holding the name each is saved under.
_FTRL_SLOT_NAMES = {"accum": "_accum_name", "linear": "_linear_name"}

TOUCHES = tuple(
    f"tensorflow.python.training.{module}:{class_name}().{attribute}"
    for class_name, (module, attributes) in _ATTRIBUTES.items()
    for attribute in attributes.values()
) + tuple(
    f"tensorflow.python.training.ftrl:FtrlOptimizer().{attribute}"
    for attribute in _FTRL_SLOT_NAMES.values()
) + (
    "tensorflow.python.training.optimizer:Optimizer._resource_apply_dense",
    # `_name`, set by the base class, checked on one of its subclasses.
    "tensorflow.python.training.gradient_descent:GradientDescentOptimizer()._name",
)

# What a v1 optimizer's update runs through: a subclass replacing one of
# them updates its variables otherwise than its TensorFlow base class.
_UPDATE_METHODS = (
    "minimize",
    "compute_gradients",
    "apply_gradients",
    "_create_slots",
    "_prepare",
    "_apply_dense",
    "_resource_apply_dense",
    "_apply_sparse",
    "_apply_sparse_duplicate_indices",
    "_resource_apply_sparse",
    "_resource_apply_sparse_duplicate_indices",
    "_finish",
)


def v1_optimizer_settings(optimizer: Any) -> dict[str, Any] | None:
    """The constructor arguments of `optimizer`, by name; None for another class.

    Args:
        optimizer: a `tf.compat.v1.train` optimizer of one of the classes of
            `_ATTRIBUTES` (`AdagradOptimizer`, `AdamOptimizer`, ...), or of a
            subclass that changes none of its update methods (`tf_kind`).
    """
    kind = tf_kind(optimizer)
    known = _ATTRIBUTES.get(kind) if kind is not None else None
    if known is None:
        return None
    return {name: getattr(optimizer, attribute) for name, attribute in known[1].items()}


def ftrl_slot_names(optimizer: Any) -> dict[str, str]:
    """The names a `FtrlOptimizer` saves its `accum` / `linear` slots under, when set."""
    names = {slot: getattr(optimizer, attribute, None) for slot, attribute in _FTRL_SLOT_NAMES.items()}
    return {slot: name for slot, name in names.items() if name}


def updates_nothing(optimizer: Any) -> bool:
    """Whether `optimizer` keeps `tf.compat.v1.train.Optimizer`'s own variable update.

    Checked on TensorFlow 2.21: the base class's `_resource_apply_dense`
    raises NotImplementedError, so a subclass that does not replace it
    cannot update a resource variable. It is reached only through the
    base class's `minimize` and `apply_gradients`: an optimizer replacing
    either (one delegating `minimize` to an optimizer it holds) trained in
    2.15 and is run as it is.
    """
    import tensorflow as tf

    base = tf.compat.v1.train.Optimizer
    for name in ("minimize", "apply_gradients", "_resource_apply_dense"):
        method = getattr(optimizer, name, None)
        if getattr(method, "__func__", None) is not getattr(base, name):
            return False
    return True


def tf_kind(optimizer: Any) -> str | None:
    """The `tf.compat.v1.train` class whose update `optimizer` runs, by name.

    That class itself, or a subclass of it replacing none of the methods an
    update runs through (a subclass adding a name or a docstring); None for
    any other optimizer, whose update is its own.
    """
    for cls in type(optimizer).__mro__:
        if cls.__name__ in _ATTRIBUTES and cls.__module__.startswith("tensorflow."):
            changed = any(
                getattr(type(optimizer), method, None) is not getattr(cls, method, None)
                for method in _UPDATE_METHODS
            )
            return None if changed else cls.__name__
    return None


@contextlib.contextmanager
def slots_named_under(optimizer: Any, prefix: str) -> Iterator[None]:
    """While open, the slots `optimizer` makes are named `<variable>/<prefix><its name>`.

    Checked on TensorFlow 2.21: a v1 optimizer names each slot by the name it
    was made with (`_name`), after the variable's; 2.15's canned models put
    `part_0/` or `t_0/` between the two. The update's name scope takes the
    prefix too. An optimizer whose `__init__` never ran the base class's
    (one that only hands `minimize` to an optimizer it holds, which 2.15
    trained with) has no name and makes no slots: it is left as it is.

    Under a MirroredStrategy each replica's step opens it in a thread of its
    own, the second while the first is still open: only the first renames
    and only the last restores, so the prefix is not added twice and the
    program's optimizer keeps its name after training.
    """
    if not hasattr(optimizer, "_name"):
        yield
        return
    with _renaming_lock:
        count, name = _renamed.get(id(optimizer), (0, optimizer._name))
        if count == 0:
            optimizer._name = f"{prefix}{name}"
        _renamed[id(optimizer)] = (count + 1, name)
    try:
        yield
    finally:
        with _renaming_lock:
            count, name = _renamed.pop(id(optimizer))
            if count > 1:
                _renamed[id(optimizer)] = (count - 1, name)
            else:
                optimizer._name = name


# id(optimizer) -> (how many slots_named_under are open on it, its own name).
_renamed: dict[int, tuple[int, str]] = {}
_renaming_lock = threading.Lock()
