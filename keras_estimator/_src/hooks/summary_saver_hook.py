"""`SummarySaverHook`: saves the model_fn's summaries every N steps or seconds.

The hook asks for summaries by fetching `summaries.summary_fetch(output_dir)`
on its steps; the step computing that fetch records what model_fn writes
(see `engine/summaries.py`).
"""

from __future__ import annotations

from typing import Any

from keras_estimator._src.base.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from keras_estimator._src.engine import summaries
from keras_estimator._src.hooks.basic_hooks import SecondOrStepTimer


class SummarySaverHook(SessionRunHook):
    """Saves the model_fn's summaries every N steps or seconds.

    Args:
        save_steps: save every this many steps (or `save_secs`, not both).
        save_secs: save every this many seconds.
        output_dir: the directory for the event files.
        summary_writer: not supported (TF1 FileWriter); pass `output_dir`.
        scaffold: not supported; must be None.
        summary_op: not supported; summaries come from the model_fn.
    """

    def __init__(
        self,
        save_steps: int | None = None,
        save_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
        scaffold: Any = None,
        summary_op: Any = None,
    ) -> None:
        for name, value in (
            ("summary_writer", summary_writer),
            ("scaffold", scaffold),
            ("summary_op", summary_op),
        ):
            if value is not None:
                raise ValueError(
                    f"SummarySaverHook({name}={value!r}) is not supported: TF1 "
                    "writers and summary ops do not exist in TF2. Pass output_dir; "
                    "summaries written in model_fn are saved there."
                )
        if output_dir is None:
            raise ValueError(
                "SummarySaverHook needs output_dir (got None): the directory to "
                "write event files to, usually the Estimator's model_dir."
            )
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._output_dir = str(output_dir)
        self._due = False
        self._event_file: summaries.EventFile | None = None

    def begin(self) -> None:
        if self._event_file is None:
            self._event_file = summaries.event_file(self._output_dir)
            self._event_file.acquire()

    def steps_until_needed(self, global_step: int) -> int | None:
        # The run that starts at the due step must be a run of its own.
        return self._timer.steps_until_trigger(global_step)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        self._due = self._timer.should_trigger_for_step(run_context.global_step)
        if not self._due:
            return None
        return SessionRunArgs(summaries.summary_fetch(self._output_dir))

    def after_run(
        self, run_context: SessionRunContext, run_values: SessionRunValues
    ) -> None:
        if self._due:
            self._timer.update_last_triggered_step(run_context.global_step - 1)
            self._due = False

    def end(self, session: Any) -> None:
        # The file is complete for TensorBoard, and no descriptor outlives
        # the loop (an Estimator may live long after training).
        if self._event_file is not None:
            self._event_file.release()
            self._event_file = None
