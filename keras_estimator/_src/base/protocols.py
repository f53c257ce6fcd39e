"""The contracts between the loop, the hooks and the model, as Protocols.

A hook or a Keras callback may tell the loop more than the SessionRunHook /
Callback interfaces say, and the loop's model reports more than Keras'
`Model` does. Each extra is declared here; the engine checks for it with
`isinstance(obj, <Protocol>)` and implementations need not inherit from
anything.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class PlansFusion(Protocol):
    """Says how many steps may run in one compiled call before it must see one.

    Without it, a hook sees every step (a plain SessionRunHook) and a Keras
    callback with per-batch methods sees every batch.
    """

    def steps_until_needed(self, global_step: int) -> int | None:
        """Steps the loop may run before this object's next step (None: any)."""


@runtime_checkable
class StopsTraining(Protocol):
    """Knows the step at which it will stop training (a stop-at-step hook).

    A loop of fixed length (`RunConfig(steps_per_loop=N)`) runs whole loops
    but never past such a step.
    """

    def steps_until_stop(self, global_step: int) -> int | None:
        """Steps until this object stops training (None: not known)."""


@runtime_checkable
class ChecksLoss(Protocol):
    """Checks every run's loss without fetching it (NanTensorHook for the loop).

    When `loop_driven` is true the loop hands it the loss of each run it
    makes (and the step of a NaN loss anywhere in a fused run) instead of the
    hook fetching a tensor, which would make every step a run of its own.
    """

    loop_driven: bool

    def check_loss(self, loss_value: Any, step: int | None = None) -> bool:
        """Handles one run's loss; returns whether it was NaN."""


@runtime_checkable
class SavesCheckpoints(Protocol):
    """Writes checkpoints from `after_run` (CheckpointSaverHook).

    When `saves_checkpoints` is true and a run ends at a step whose loss is
    NaN, the loop calls its `after_run` after the NaN check rather than at
    its place in the hooks' order: a check that raises leaves that step's
    variables unsaved.
    """

    saves_checkpoints: bool
