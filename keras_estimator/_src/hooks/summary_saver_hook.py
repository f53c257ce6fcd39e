"""`SummarySaverHook`: saves summaries every N steps or seconds.

Given a `summary_op` (or a Scaffold holding one), the hook fetches those TF1
summary tensors on its steps and writes the serialized protos, labelled with
the global step after the step, as tf.estimator 2.15 did. Without one (the
Estimator's own hook, or an EstimatorSpec's Scaffold whose `summary_op` is
unset, which 2.15's session finalized to `merge_all()`), it asks for all of
the model_fn's summaries by fetching `summaries.summary_fetch(output_dir)`; the step
computing that fetch records what model_fn writes (see `engine/summaries.py`).
"""

from __future__ import annotations

import logging
from typing import Any

import tensorflow as tf

from keras_estimator._src.base.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from keras_estimator._src.engine import summaries
from keras_estimator._src.hooks.basic_hooks import SecondOrStepTimer
from keras_estimator._src.hooks.v1_session import runs_tf_hook_in_v1_sessions
from keras_estimator._src.tf_internals import summary_writers

logger = logging.getLogger("keras_estimator")


@runs_tf_hook_in_v1_sessions
class SummarySaverHook(SessionRunHook):
    """Saves summaries every N steps or seconds.

    Args:
        save_steps: save every this many steps (or `save_secs`, not both).
        save_secs: save every this many seconds.
        output_dir: the directory for the event files (used when no
            `summary_writer` is given).
        summary_writer: a `tf.compat.v1.summary.FileWriter` (anything with
            `add_summary(summary, step)`) or a `tf.summary` writer.
        scaffold: a Scaffold whose `summary_op` is saved; unset, the
            model_fn's summaries are when it is the EstimatorSpec's Scaffold
            (what 2.15's finalized `merge_all()` held), and none are for
            another Scaffold (which 2.15 never finalized).
        summary_op: a string tensor of serialized `Summary` protos
            (`tf.compat.v1.summary.scalar`, `merge_all`, ...) or a list of them.
            Neither `scaffold` nor `summary_op`: the model_fn's summaries.
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
        if scaffold is not None and summary_op is not None:
            raise ValueError(
                "Exactly one of scaffold or summary_op must be provided; got "
                f"scaffold={scaffold!r} and summary_op={summary_op!r}. Pass one "
                "(or neither, to save the model_fn's summaries)."
            )
        if summary_writer is not None and not (
            hasattr(summary_writer, "add_summary")
            or isinstance(summary_writer, tf.summary.SummaryWriter)
        ):
            raise TypeError(
                f"SummarySaverHook(summary_writer={summary_writer!r}): expected a "
                "tf.compat.v1.summary.FileWriter or a tf.summary writer; or pass "
                "output_dir instead."
            )
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._output_dir = None if output_dir is None else str(output_dir)
        self._summary_writer = summary_writer
        self._scaffold = scaffold
        self._summary_op = summary_op
        self._due = False
        self._due_after = 0
        self._at_run_end = False
        self._event_file: summaries.EventFile | None = None

    def _ops(self) -> list[Any] | None:
        """The summary tensors to fetch, or None for the model_fn's summaries.

        Empty for a `tf.compat.v1.train.Scaffold` with no `summary_op` that
        no EstimatorSpec returned: 2.15 never finalized it, so the hook
        saved nothing.
        """
        op = self._summary_op
        if op is None and self._scaffold is not None:
            op = getattr(self._scaffold, "summary_op", None)
            if op is None and _unfinalized(self._scaffold):
                return []
        if op is None:
            return None
        return list(op) if isinstance(op, (list, tuple)) else [op]

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir is None:
            # As in 2.15, such a hook runs and writes nothing.
            logger.warning(
                "SummarySaverHook has neither output_dir nor summary_writer: "
                "it writes nothing. Pass output_dir."
            )
            return
        if self._event_file is None and (
            self._summary_writer is None or self._ops() is None
        ):
            self._event_file = summaries.event_file(self._model_fn_dir())
            self._event_file.acquire()

    @property
    def observes_only(self) -> bool:
        """Its after_run only writes what it fetched (see `ObserverHook`);
        not on a timer in seconds, whose saves are due by the clock."""
        return self._timer.steps_until_trigger(0) is not None

    def _model_fn_dir(self) -> str:
        """Where the model_fn's summaries go (a writer's logdir, else output_dir)."""
        logdir = None
        if self._summary_writer is not None and hasattr(self._summary_writer, "get_logdir"):
            logdir = self._summary_writer.get_logdir()
        return str(logdir or self._output_dir)

    def fetch_at_run_end(self, enabled: bool) -> None:
        """Whether the loop may fuse the steps before a summarized step into its run.

        The hook dispatcher calls this before `begin()`. When enabled, the
        summarized step is the last step of a longer run
        (`run_context.run_steps` steps) rather than a run of its own; the
        summaries, their values and steps are the same.
        """
        self._at_run_end = enabled

    def steps_until_needed(self, global_step: int) -> int | None:
        if self._at_run_end:
            # Steps up to and including the one that starts at the due
            # step: it ends the run that writes its summaries.
            return self._timer.steps_until_trigger(global_step - 1)
        # The run that starts at the due step must be a run of its own.
        return self._timer.steps_until_trigger(global_step)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        steps = run_context.run_steps if self._at_run_end else 1
        # The step whose summaries the run would write starts at this one.
        start = run_context.global_step + steps - 1
        self._due = self._timer.should_trigger_for_step(start)
        self._due_after = start + 1
        if not self._due or (self._summary_writer is None and self._output_dir is None):
            return None
        ops = self._ops()
        if ops is None:
            return SessionRunArgs(summaries.summary_fetch(self._model_fn_dir()))
        return SessionRunArgs(ops) if ops else None

    def after_run(
        self, run_context: SessionRunContext, run_values: SessionRunValues
    ) -> None:
        if not self._due:
            return
        if self._at_run_end and run_context.global_step != self._due_after:
            # The run ended (its input, or a NaN loss) before the due step.
            self._due = False
            return
        self._timer.update_last_triggered_step(run_context.global_step - 1)
        self._due = False
        if run_values.results is None or self._ops() is None:
            return
        for serialized in run_values.results:
            self._write(serialized, run_context.global_step)

    def _write(self, serialized: Any, step: int) -> None:
        """Writes one serialized Summary at `step` (the step after the run)."""
        value = serialized.item() if hasattr(serialized, "item") else serialized
        writer = self._summary_writer
        if writer is not None and hasattr(writer, "add_summary"):
            writer.add_summary(value, step)
        elif writer is not None:
            summary_writers.write_summary_proto(writer, value, step)
        elif self._event_file is not None:
            summary_writers.write_summary_proto(self._event_file.writer, value, step)

    def end(self, session: Any) -> None:
        # The file is complete for TensorBoard, and no descriptor outlives
        # the loop (an Estimator may live long after training).
        if self._summary_writer is not None:
            self._summary_writer.flush()
        if self._event_file is not None:
            self._event_file.release()
            self._event_file = None


def _unfinalized(scaffold: Any) -> bool:
    """A TF1 Scaffold that no EstimatorSpec returned (see `summaries.is_session_scaffold`)."""
    return isinstance(scaffold, tf.compat.v1.train.Scaffold) and not (
        summaries.is_session_scaffold(scaffold)
    )
