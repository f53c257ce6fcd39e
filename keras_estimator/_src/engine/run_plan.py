"""`RunState`: one fit / evaluate / predict call, as the loop and the model share it.

The loop makes one per call (`loop.run_training`, `loop.run_evaluation`, the
parameter-server driver, the predict loop; `Estimator.train` makes the
training one first, for the callbacks that read it) and hands it to the model
for the length of the call (`ModelFnModel.running(run)`). Before each
compiled call the model asks it how many steps the call may run
(`planned_steps`); after it, the model writes back what the call did
(`record`): the steps run, the step of a NaN loss, the values hooks fetched
and, in training, the global step and loss reached. The hook dispatcher, the
loop's own callbacks and the progress bar read it. A call inside another (an
evaluation during training) runs under a run of its own, and the outer one
is the model's again when the inner call returns.

`LoopModel` is what the hook dispatcher needs of a model that runs under a
`RunState` (a `ModelFnModel`); a plain Keras model has none of it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, runtime_checkable

import tensorflow as tf

from keras_estimator._src.engine.fetches import FetchPlan, StepwiseValues
from keras_estimator._src.engine.fused_loop import GLOBAL_STEP_KEY, LOSS_KEY

# Longest run of steps fused into one call when no callback needs a step:
# long enough to amortise dispatch, short enough that timers (seconds-based
# checkpoints) are checked a few times a second on small models.
MAX_FUSED_STEPS = 1000


@dataclasses.dataclass
class FetchState:
    """What hooks ask the next run to fetch, and what the last run fetched."""

    request: FetchPlan | None = None
    results: dict[str, Any] = dataclasses.field(default_factory=dict)
    # The steps of the run `request` fetches for at its last step (the
    # hooks' `run_context.run_steps`): the steps before it run fused in the
    # same compiled call. 1: the fetching step is a run of its own.
    run_steps: int = 1
    # Whether that last step did not run (the input ended, or a loss was
    # NaN, before it): the steps before it ran, and nothing was fetched.
    missed: bool = False
    # A run of several steps that each fetched (`FetchPlan.every_step`): every
    # step's values and global step. None after a run of one fetching step.
    stepwise: StepwiseValues | None = None


class Planner(Protocol):
    """What plans a call's compiled calls (`loop.StepPlanner`)."""

    def __call__(self, progress: int, /) -> int:
        """The steps the next compiled call may run, given the progress."""
        ...

    def plans_no_step(self, progress: int, /) -> bool:
        """Whether that is 0, asking no more than that needs."""
        ...


class RunState:
    """One call's state, shared by the loop, the model and the hooks; see the module.

    Args:
        start: the global step when the call begins (training).

    Attributes:
        start: the global step the call began at.
        value: the global step as the loop last saw it (read once per
            compiled call).
        last_loss: the loss of the last step run, in training.
        planner: the steps the next compiled call may run, given the global
            step (training) or the steps run so far (evaluation); None
            outside the loop (a plain Keras call, or the idle state between
            calls).
        step_limit: in evaluation, the steps to run in all (None: until the
            input ends).
        training: whether the call trains (its progress is the global step).
        loop_length: with `RunConfig(steps_per_loop=N)`, N: every call runs a
            whole loop, and a run that fetches for hooks still runs it all.
        last_run_steps: steps the last compiled call ran (0: the input ended
            before a step hooks waited for).
        nan_loss_step: the global step of the last call's first NaN loss.
        steps_run: steps run by the call's compiled calls, in all.
        fetches: the hooks' fetch request and the last run's results.
        input_box: the only reference the model keeps to the tf.data
            iterator the call reads (`ModelFnModel.reading_input`).
        epoch_iterators: the Keras epoch iterators wrapping it.
    """

    def __init__(self, start: int = 0) -> None:
        self.start = start
        self.value = start
        self.last_loss: float | None = None
        self.planner: Planner | None = None
        self.step_limit: int | None = None
        self.training = True
        self.loop_length: int | None = None
        self.last_run_steps = 1
        self.nan_loss_step: int | None = None
        self.steps_run = 0
        self.fetches = FetchState()
        # Whether a run's fetching step may be its last, fused with the
        # steps before it (training on one device; set by the loop).
        self.fuses_run_end = False
        self.input_box: list[Any] = []
        self.epoch_iterators: list[Any] = []

    @property
    def in_loop(self) -> bool:
        """Whether the loop plans this call's compiled calls."""
        return self.planner is not None

    def planned_steps(self) -> int | None:
        """The steps the next compiled call may run; None outside the loop."""
        planner = self.planner
        if planner is None:
            return None
        if self.training:
            return planner(self.value)
        done = self.steps_run
        remaining = MAX_FUSED_STEPS if self.step_limit is None else self.step_limit - done
        return max(min(remaining, planner(done)), 0)

    def plans_no_step(self) -> bool | None:
        """Whether `planned_steps()` is 0, asking no more callbacks than that
        needs (`StepPlanner.plans_no_step`); None outside the loop."""
        planner = self.planner
        if planner is None:
            return None
        if self.training:
            return planner.plans_no_step(self.value)
        done = self.steps_run
        if self.step_limit is not None and self.step_limit - done <= 0:
            return True
        return planner.plans_no_step(done)

    def record(self, steps_run: int, logs: dict[str, Any]) -> None:
        """Takes what a compiled call did: its steps and, when it ran any, its logs."""
        self.steps_run += steps_run
        if steps_run and self.training and self.planner is not None:
            self.value = int(logs[GLOBAL_STEP_KEY])
            self.last_loss = float(logs[LOSS_KEY])


@runtime_checkable
class LoopModel(Protocol):
    """What the hook dispatcher uses of a model run under a `RunState`."""

    @property
    def run_state(self) -> RunState:
        """The state of the call under way (an idle one between calls)."""

    @property
    def build_graphs(self) -> dict[str, Any]:
        """Mode -> the graph hooks' `begin()` sees."""

    @property
    def loss_names(self) -> dict[str, str]:
        """Mode -> the graph name of its loss tensor."""

    def store_variable(self, name: str) -> tf.Variable | None:
        """The variable training updates for the checkpoint name `name`."""

    def can_fetch_once(self) -> bool:
        """Whether `fetch_once` can run here."""

    def fetch_once(self, plan: FetchPlan) -> dict[str, Any] | None:
        """What `plan` fetches on the training input's next batch, training nothing."""
