"""A Keras optimizer's step counter: read it, or count in another variable.

Checked on Keras 3.15. A Keras 3 optimizer keeps its step counter in the
private `_iterations` (its `iterations` property has no setter) and lists it
among its variables in the private `_variables` (which its checkpoints and
`optimizer.variables` hold).

Private symbols touched: `BaseOptimizer._iterations` and
`BaseOptimizer._variables`, on an instance.
"""

from __future__ import annotations

from typing import Any

TOUCHES = (
    "keras.src.optimizers.base_optimizer:BaseOptimizer()._iterations",
    "keras.src.optimizers.base_optimizer:BaseOptimizer()._variables",
)


def step_counter(optimizer: Any) -> Any:
    """The variable `optimizer` counts its steps in, or None if it has none (a v1 one)."""
    return getattr(optimizer, "_iterations", None)


def count_steps_in(optimizer: Any, variable: Any) -> Any:
    """Makes `optimizer` count its steps in `variable`; returns the counter it had.

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
