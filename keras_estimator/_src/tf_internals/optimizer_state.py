"""An optimizer's step counter and learning rate, where the optimizer keeps them.

Checked on Keras 3.15 and TensorFlow 2.21. A Keras 3 optimizer keeps its step
counter in the private `_iterations` (its `iterations` property has no
setter) and lists it among its variables in the private `_variables` (which
its checkpoints and `optimizer.variables` hold); it keeps its learning rate
(a variable, or a schedule) in `_learning_rate`. A `tf.compat.v1.train`
optimizer keeps the rate it was given in `_learning_rate`, or `_lr` (Adam,
Adadelta), with no public getter. A `tf.compat.v1.train` optimizer keeps
its slots in `_slots` and its other variables (Adam's `beta1_power`) in
`_non_slot_dict`; its public `variables()` lists only those of the current
default graph, which a traced step's variables are not.

Private symbols touched: `BaseOptimizer._iterations`, `_variables` and
`_learning_rate` on an instance, and the v1 optimizers' `_learning_rate` /
`_lr`, `_slots` and `_non_slot_dict`.
"""

from __future__ import annotations

from typing import Any

TOUCHES = (
    "keras.src.optimizers.base_optimizer:BaseOptimizer()._iterations",
    "keras.src.optimizers.base_optimizer:BaseOptimizer()._variables",
    "keras.src.optimizers.base_optimizer:BaseOptimizer()._learning_rate",
    "tensorflow.python.training.gradient_descent:GradientDescentOptimizer()._learning_rate",
    "tensorflow.python.training.adam:AdamOptimizer()._lr",
    "tensorflow.python.training.adam:AdamOptimizer()._slots",
    "tensorflow.python.training.adam:AdamOptimizer()._non_slot_dict",
)


def step_counter(optimizer: Any) -> Any:
    """The variable `optimizer` counts its steps in, or None if it has none (a v1 one)."""
    return getattr(optimizer, "_iterations", None)


def count_steps_in(optimizer: Any, variable: Any) -> Any:
    """Makes a Keras `optimizer` count its steps in `variable`; returns the counter it had.

    The old counter is no longer one of the optimizer's variables, so
    nothing saves it along with them.
    """
    own = optimizer._iterations
    for index, tracked in enumerate(optimizer._variables):
        if tracked is own:
            del optimizer._variables[index]
            break
    optimizer._iterations = variable
    return own


def learning_rate(optimizer: Any) -> Any:
    """The learning rate `optimizer` holds (a number, variable, tensor or schedule), or None."""
    if hasattr(optimizer, "_learning_rate"):
        return optimizer._learning_rate
    return getattr(optimizer, "_lr", None)


def v1_state_variables(optimizer: Any) -> list[Any]:
    """The slot and other variables a `tf.compat.v1.train` optimizer made, in any graph."""
    slots = getattr(optimizer, "_slots", None) or {}
    made = [slot for per_variable in slots.values() for slot in per_variable.values()]
    made.extend((getattr(optimizer, "_non_slot_dict", None) or {}).values())
    return made
