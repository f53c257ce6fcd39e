"""`RunPlan`: what one fit / evaluate / predict call and the model tell each other.

The loop hands a plan to the model for the length of one call
(`ModelFnModel.running(plan)`). Before each compiled call the model reads the
loop's side: how many steps the call may run (`step_plan`), what to call with
each call's logs (`after_chunk`), and the fixed loop length, if any. After it,
the model writes back what the call did: the steps it ran, the step of a NaN
loss, and the values hooks fetched (`fetches`). The hook dispatcher reads
those. A call inside another (an evaluation during training) runs under a plan
of its own, and the outer plan is as it was when the inner call returns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from keras_estimator._src.engine.fetches import FetchPlan


@dataclasses.dataclass
class FetchState:
    """What hooks ask the next run to fetch, and what the last run fetched."""

    request: FetchPlan | None = None
    results: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class RunPlan:
    """One call's arrangement between the loop and the model; see the module.

    Attributes:
        step_plan: returns the steps the next compiled call may run; None
            outside the loop (a plain Keras call).
        after_chunk: called with each compiled call's logs (training).
        loop_length: with `RunConfig(steps_per_loop=N)`, N: every call runs a
            whole loop, and a run that fetches for hooks still runs it all.
        last_run_steps: steps the last compiled call ran (0: the input ended
            before a step hooks waited for).
        nan_loss_step: the global step of the last call's first NaN loss.
        fetches: the hooks' fetch request and the last run's results.
    """

    step_plan: Callable[[], int] | None = None
    after_chunk: Callable[[dict[str, Any]], None] | None = None
    loop_length: int | None = None
    last_run_steps: int = 1
    nan_loss_step: int | None = None
    fetches: FetchState = dataclasses.field(default_factory=FetchState)
