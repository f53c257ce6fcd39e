"""tf.estimator's basic SessionRunHooks, for a loop that may fuse steps.

The loop runs one or more training steps per "run" and calls every hook's
`before_run` / `after_run` around each run (see `session_run_hook`). A hook
here says through `steps_until_needed(global_step)` how long the next run may
be before it must see a run boundary; the loop never makes a run longer. A
hook that fetches values for a step returns 1, so that step is its own run.

Every decision (log now? stop now?) is taken from the global step, never
from counting `before_run` calls, so each hook behaves the same whether the
loop runs one step at a time (as tf.estimator did) or fuses steps. With one
step per run the global step and tf.estimator's iteration count advance
together, which is what makes the two the same.

Checkpointing hooks (`CheckpointSaverHook`, `CheckpointSaverListener`) live
in `checkpoint_hooks`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator._src.base.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from keras_estimator._src.engine import loop_context, summaries
from keras_estimator._src.engine.variable_store import as_tf_variable
from keras_estimator._src.hooks.v1_session import (
    runs_tf_hook_in_v1_sessions,
    tf_hook_of,
)
from keras_estimator._src.tf_internals import summary_writers

logger = logging.getLogger("keras_estimator")


def _clock() -> float:
    """Seconds on a monotonic clock (a function so tests can replace it)."""
    return time.monotonic()


def _loop_global_step(fallback: int | None = None) -> int | None:
    """The running loop's global step, or `fallback` outside a loop."""
    context = loop_context.current()
    if context is None:
        return fallback
    return context.global_step()


# ---- timers ------------------------------------------------------------------


class SecondOrStepTimer:
    """Triggers at most once every `every_secs` seconds or every `every_steps` steps.

    Exactly one of the two must be given. The first call of
    `should_trigger_for_step` always triggers.
    """

    def __init__(self, every_secs: float | None = None, every_steps: int | None = None) -> None:
        if every_secs is None and every_steps is None:
            raise ValueError(
                "Either every_secs or every_steps should be provided "
                f"(got every_secs={every_secs!r}, every_steps={every_steps!r})."
            )
        if every_secs is not None and every_steps is not None:
            raise ValueError(
                "Can not provide both every_secs and every_steps "
                f"(got every_secs={every_secs!r}, every_steps={every_steps!r})."
            )
        self._every_secs = every_secs
        self._every_steps = every_steps
        self._last_triggered_step: int | None = None
        self._last_triggered_time: float | None = None

    def reset(self) -> None:
        """Forgets the last trigger: the next step triggers."""
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step: int) -> bool:
        """True if `step` is due: first call, or `every_*` passed since the last trigger."""
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and self._last_triggered_time is not None:
            if _clock() >= self._last_triggered_time + self._every_secs:
                return True
        if self._every_steps is not None:
            if step >= self._last_triggered_step + self._every_steps:
                return True
        return False

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        """Records a trigger at `step`.

        Returns:
            `(elapsed_secs, elapsed_steps)` since the previous trigger, or
            `(None, None)` on the first trigger.
        """
        now = _clock()
        if self._last_triggered_time is None or self._last_triggered_step is None:
            elapsed: tuple[float | None, int | None] = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self) -> int | None:
        """The step of the last trigger, or None if it never triggered."""
        return self._last_triggered_step

    def steps_until_trigger(self, step: int) -> int | None:
        """For a step timer: k >= 1 such that step `step + k` is the next due.

        None for a seconds timer (its triggers depend on the clock, not on
        the step). Before the first trigger the very next step is due (1).
        """
        if self._every_steps is None:
            return None
        if self._last_triggered_step is None:
            return 1
        return max(self._last_triggered_step + self._every_steps - step, 1)


class _NeverTriggerTimer(SecondOrStepTimer):
    """A timer that never triggers (LoggingTensorHook with only `at_end`)."""

    def __init__(self) -> None:
        super().__init__(every_steps=1)

    def should_trigger_for_step(self, step: int) -> bool:
        del step
        return False

    def steps_until_trigger(self, step: int) -> int | None:
        del step
        return None


# ---- logging -----------------------------------------------------------------


class ObserverHook(SessionRunHook):
    """A SessionRunHook whose `after_run` only observes: fetches may be fused.

    A hook that fetches values on every step makes every step a compiled
    call of its own. Subclassing this class (or setting the class attribute
    `observes_only = True` on any hook) tells the loop the hook keeps these
    promises:

    - `before_run` returns the same `SessionRunArgs` fetches at every step
      (the same object, or fetches of the same tensors), or None;
    - `before_run` and `after_run` read training only through their
      `run_context` (its `global_step`) and `run_values`, never the live
      variables or the clock to decide what to fetch;
    - `after_run` never calls `run_context.request_stop()` and never changes
      what training does.

    The loop may then run several such steps in one compiled call that keeps
    every step's fetched values, and afterwards call the hook's `before_run`
    and `after_run` step by step, in order, with the values and global steps
    it would have seen running the steps one by one. Runs still end where
    any other hook needs them to (checkpoints, summaries, stops). A hook
    breaking the promises is reported with a RuntimeError.
    """

    observes_only = True


def _tag(item: Any) -> str:
    """A log tag for an item of a list: a graph name as given, a tensor as
    tf.estimator 2.15 printed it (`Tensor("Identity:0", shape=(2, 1),
    dtype=float32)`), anything else by its name."""
    if isinstance(item, str):
        return item
    if isinstance(item, tf.Tensor) and tf.is_symbolic_tensor(item):
        return str(item)
    name = getattr(item, "name", None)
    if isinstance(name, str):
        return name
    return str(item)


@runs_tf_hook_in_v1_sessions
class LoggingTensorHook(SessionRunHook):
    """Logs tensor values every N steps, every N seconds, and/or at the end.

    Lines go to the `keras_estimator` logger at INFO as
    `tag = value, tag2 = value2 (0.123 sec)`; the elapsed time since the last
    line is left off the first one. Tags of a dict are logged in sorted order,
    the items of a list in their order.

    Steps are counted on the global step: the first line is for the first step
    of the loop, then every `every_n_iter` steps after the last line. Where the
    global step does not move (evaluation), runs are counted instead, as
    tf.estimator counted `Session.run` calls.

    Args:
        tensors: dict of tag -> tensor (or graph name such as `"loss:0"`), or a
            list of tensors / names (a name tagged by itself, a graph tensor
            by its text, `Tensor("name:0", shape=..., dtype=...)`, as in
            tf.estimator 2.15).
        every_n_iter: log every N steps.
        every_n_secs: log at most once every N seconds (the hook then checks
            before every step, so no steps are fused while it runs).
        at_end: also log the tensors when the loop ends. As in tf.estimator,
            training evaluates them once more in `end()`, on the next batch
            without the train_op; where the loop cannot (evaluation, a plain
            Keras model's `fit`), the hook fetches them on every step and
            logs the last step's values.
        formatter: function of the dict tag -> numpy value returning the line.
    """

    def __init__(
        self,
        tensors: Any,
        every_n_iter: int | None = None,
        every_n_secs: float | None = None,
        at_end: bool = False,
        formatter: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError(
                "either at_end and/or exactly one of every_n_iter and every_n_secs "
                f"must be provided (got every_n_iter={every_n_iter!r}, "
                f"every_n_secs={every_n_secs!r}, at_end={at_end!r})."
            )
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if isinstance(tensors, dict):
            self._tag_order = sorted(tensors)
            self._tensors = dict(tensors)
        else:
            items = list(tensors)
            self._tag_order = [_tag(item) for item in items]
            self._tensors = dict(zip(self._tag_order, items, strict=True))
        self._formatter = formatter
        self._timer: SecondOrStepTimer = (
            _NeverTriggerTimer()
            if only_at_end
            else SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter)
        )
        self._every_n_secs = every_n_secs
        self._log_at_end = at_end
        self._position: int | None = None
        self._run_start = 0
        self._counting_runs = False
        self._should_trigger = False
        self._fetching = False
        self._last_values: dict[str, Any] | None = None
        self._run_at_end = False
        self._at_run_end = False

    # begin() resets what a run changes; the dispatcher sets the rest before
    # it, so an Estimator may run the same object again in a later call.
    resets_in_begin = True

    def fetch_at_run_end(self, enabled: bool) -> None:
        """Whether the loop may fuse the steps before a logged step into its run.

        The hook dispatcher calls this before `begin()`. When enabled, the
        run before a logged step no longer ends just before it: the logged
        step is the last step of a longer run (`run_context.run_steps`
        steps), whose values the hook fetches. The lines, their values and
        steps are the same.
        """
        self._at_run_end = enabled

    @property
    def observes_only(self) -> bool:
        """Its after_run only logs (see `ObserverHook`); not on a timer in
        seconds, whose lines are due by the clock at each step."""
        return self._every_n_secs is None

    def _fetches_for_end(self) -> bool:
        return self._log_at_end and not self._run_at_end

    def steps_until_needed(self, global_step: int) -> int | None:
        if self._fetches_for_end() or self._every_n_secs is not None or self._counting_runs:
            return 1
        until = self._timer.steps_until_trigger(global_step)
        if until is None:
            return None
        if self._at_run_end:
            return until  # the due step ends the run that fetches it
        # The due step must be a run of its own (its values are fetched), so
        # the run before it ends just before it.
        return max(until - 1, 1)

    def begin(self) -> None:
        self._timer.reset()
        self._position = None
        self._counting_runs = False
        self._last_values = None
        self._run_at_end = False

    def after_create_session(self, session: Any, coord: Any) -> None:
        self._run_at_end = self._log_at_end and _runs_fetches(session)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        if self._position is None:
            self._position = run_context.global_step
        self._run_start = run_context.global_step
        # The run's last step is the one whose values it would fetch.
        steps = run_context.run_steps if self._at_run_end else 1
        self._should_trigger = self._timer.should_trigger_for_step(self._position + steps)
        self._fetching = self._should_trigger or self._fetches_for_end()
        return SessionRunArgs(self._tensors) if self._fetching else None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        advanced = run_context.global_step - self._run_start
        if advanced <= 0:
            self._counting_runs = True
        self._position = (self._position or 0) + (advanced if advanced > 0 else 1)
        if self._fetching:
            self._last_values = run_values.results
        if self._should_trigger and run_values.results is not None:
            self._log(run_values.results)

    def end(self, session: Any) -> None:
        if not self._log_at_end:
            return
        if self._run_at_end and _runs_fetches(session):
            try:
                # A name without an output index is its op's first output,
                # as the hook's before_run fetches (and 2.15's hook) read it.
                values = session.run({tag: _tensor_name(t) for tag, t in self._tensors.items()})
            except tf.errors.OutOfRangeError:
                # tf.estimator 2.15 raised here, and lost the final checkpoint.
                logger.warning(
                    "LoggingTensorHook(at_end=True): the input has no batch left to "
                    "evaluate the tensors on after the last step; nothing logged."
                )
                return
            self._log(values)
            return
        if self._last_values is None:
            logger.debug("LoggingTensorHook(at_end=True): no step ran, nothing to log.")
            return
        self._log(self._last_values)

    def _log(self, values: dict[str, Any]) -> None:
        elapsed, _ = self._timer.update_last_triggered_step(self._position or 0)
        with np.printoptions(suppress=True):
            if self._formatter is not None:
                logger.info("%s", self._formatter(values))
                return
            stats = ", ".join(f"{tag} = {values[tag]!s}" for tag in self._tag_order)
            if elapsed is not None:
                logger.info("%s (%.3f sec)", stats, elapsed)
            else:
                logger.info("%s", stats)


# ---- stopping ----------------------------------------------------------------


@runs_tf_hook_in_v1_sessions
class StopAtStepHook(SessionRunHook):
    """Requests stop when the global step reaches a given step.

    Args:
        num_steps: steps to run after the global step the loop starts at.
        last_step: the global step to stop at.
        (Exactly one must be given.)

    Runs are never fused past the last step.
    """

    def __init__(self, num_steps: int | None = None, last_step: int | None = None) -> None:
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError(
                "Only one of num_steps or last_step can be specified "
                f"(got num_steps={num_steps!r}, last_step={last_step!r})."
            )
        self._num_steps = num_steps
        self._last_step = last_step

    @property
    def last_step(self) -> int | None:
        """The step to stop at (known once the loop started for `num_steps`)."""
        return self._last_step

    def _resolve(self, global_step: int | None) -> None:
        if self._last_step is None and global_step is not None:
            assert self._num_steps is not None
            self._last_step = global_step + self._num_steps

    def after_create_session(self, session: Any, coord: Any) -> None:
        self._resolve(_loop_global_step())

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        self._resolve(run_context.global_step)
        return None

    def steps_until_needed(self, global_step: int) -> int | None:
        if self._last_step is None:
            return self._num_steps
        return max(self._last_step - global_step, 1)

    # A loop of fixed length (RunConfig.steps_per_loop) ends early here too.
    steps_until_stop = steps_until_needed

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        self._resolve(run_context.global_step)
        if self._last_step is not None and run_context.global_step >= self._last_step:
            run_context.request_stop()


# ---- step rate ---------------------------------------------------------------


@runs_tf_hook_in_v1_sessions
class StepCounterHook(SessionRunHook):
    """Logs `global_step/sec: X` every N steps or seconds.

    The rate is over the steps and time since the previous line; the first
    trigger (the first step) only starts the clock. With `output_dir` the rate
    is also written as the scalar summary `global_step/sec` at that step.

    Args:
        every_n_steps: log every N global steps.
        every_n_secs: log at most every N seconds (checked at run boundaries);
            pass `every_n_steps=None` with it.
        output_dir: where to write summaries (optional).
        summary_writer: not supported (TF1 FileWriter); pass `output_dir`.
    """

    _SUMMARY_TAG = "global_step/sec"

    def __init__(
        self,
        every_n_steps: int | None = 100,
        every_n_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
    ) -> None:
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError(
                "exactly one of every_n_steps and every_n_secs should be provided "
                f"(got every_n_steps={every_n_steps!r}, every_n_secs={every_n_secs!r})."
            )
        # Refused when the loop begins: a TF1 session runs TensorFlow's hook,
        # which writes to it (`v1_session`).
        self._refused = (
            None
            if summary_writer is None
            else (
                "StepCounterHook(summary_writer=...) is not supported: TF1 "
                "FileWriter objects do not exist in TF2. Pass output_dir=... and "
                "the hook writes the summary with tf.summary.create_file_writer."
            )
        )
        self._timer = SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_steps)
        self._output_dir = output_dir
        # The directory's shared event file, as 2.15's hooks shared one
        # FileWriter per directory (SummaryWriterCache): one file per loop.
        self._event_file: summaries.EventFile | None = None
        self._last_global_step: int | None = None
        self._unchanged_count = 0

    def steps_until_needed(self, global_step: int) -> int | None:
        return self._timer.steps_until_trigger(global_step)

    def begin(self) -> None:
        if self._refused is not None:
            raise ValueError(self._refused)
        self._timer.reset()
        self._last_global_step = None
        self._unchanged_count = 0

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        step = run_context.global_step
        if self._timer.should_trigger_for_step(step):
            elapsed_secs, elapsed_steps = self._timer.update_last_triggered_step(step)
            if elapsed_secs is not None and elapsed_steps is not None:
                self._log_and_record(elapsed_steps, elapsed_secs, step)
        if step == self._last_global_step:
            self._unchanged_count += 1
            if self._unchanged_count % 20 == 0:
                self._unchanged_count = 0
                logger.warning(
                    "It seems that global step has not been increased. Current "
                    "value (could be stable): %s vs previous value: %s.",
                    step,
                    self._last_global_step,
                )
        else:
            self._unchanged_count = 0
        self._last_global_step = step

    def end(self, session: Any) -> None:
        if self._event_file is not None:
            self._event_file.release()
            self._event_file = None

    def _log_and_record(self, elapsed_steps: int, elapsed_secs: float, step: int) -> None:
        rate = elapsed_steps / elapsed_secs if elapsed_secs > 0 else float("inf")
        self._record(self._SUMMARY_TAG, rate, step)

    def _record(self, tag: str, value: float, step: int) -> None:
        """Logs `tag: value`, and writes it at `step` with `output_dir`."""
        if self._output_dir:
            # The event tf.estimator wrote (a `simple_value`), in one op:
            # tf.summary.scalar costs ten times as much at every log.
            summary = tf.compat.v1.Summary(
                value=[tf.compat.v1.Summary.Value(tag=tag, simple_value=value)]
            )
            with tf.init_scope():
                if self._event_file is None:
                    self._event_file = summaries.event_file(self._output_dir)
                    self._event_file.acquire()
                summary_writers.write_summary_proto(
                    self._event_file.writer, summary.SerializeToString(), step
                )
        logger.info("%s: %g", tag, value)


# ---- NaN loss ----------------------------------------------------------------


class NanLossDuringTrainingError(RuntimeError):
    """Raised by NanTensorHook when the loss is NaN."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*(args or ("NaN loss during training.",)))

    def __str__(self) -> str:
        return "NaN loss during training."


@runs_tf_hook_in_v1_sessions
class NanTensorHook(SessionRunHook):
    """Fails (or stops training) when the loss is NaN.

    As built by a user, the hook fetches `loss_tensor` on every step (no steps
    are fused while it runs) and checks each value, as tf.estimator did.

    Driven by the loop (`NanTensorHook.for_loop(...)` or `loop_driven = True`)
    it fetches nothing and constrains no run; instead the loop ends a run at
    a step whose loss is NaN and passes that loss to `check_loss(loss, step)`
    at the hook's place in the hooks' order: the hooks before it have seen
    the step end (checkpoint savers excepted, which see it after the check),
    those after it see it only if the check does not raise.

    Args:
        loss_tensor: the loss tensor (or its graph name).
        fail_on_nan_loss: raise `NanLossDuringTrainingError` if True; else log
            a warning and request stop.
    """

    # Marks hooks the loop may drive with the loss of each (fused) run.
    checks_fused_loss = True

    def __init__(self, loss_tensor: Any, fail_on_nan_loss: bool = True) -> None:
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss
        self.loop_driven = False
        self._stop_pending = False

    @classmethod
    def for_loop(cls, loss_tensor: Any = None, fail_on_nan_loss: bool = True) -> NanTensorHook:
        """A hook the loop drives through `check_loss` (it fetches nothing)."""
        hook = cls(loss_tensor, fail_on_nan_loss)
        hook.loop_driven = True
        return hook

    def steps_until_needed(self, global_step: int) -> int | None:
        return None if self.loop_driven else 1

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        if self.loop_driven or self._loss_tensor is None:
            return None
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if not self.loop_driven and run_values.results is not None:
            self.check_loss(run_values.results, run_context.global_step)
        if self._stop_pending:
            self._stop_pending = False
            run_context.request_stop()

    def check_loss(self, loss_value: Any, step: int | None = None) -> bool:
        """Checks one loss value; True if it is NaN.

        Raises:
            NanLossDuringTrainingError: the loss is NaN and `fail_on_nan_loss`.
                Otherwise a NaN logs a warning and the next `after_run`
                requests stop.
        """
        if isinstance(loss_value, float):  # the loop's per-run loss: no numpy
            if not math.isnan(loss_value):
                return False
        elif not np.any(np.isnan(np.asarray(loss_value, dtype=np.float64))):
            return False
        at = "" if step is None else f" at step {step}"
        message = f"Model diverged with loss = NaN{at}."
        if self._fail_on_nan_loss:
            logger.error(message)
            raise NanLossDuringTrainingError
        logger.warning(message)
        self._stop_pending = True
        return True


# ---- final values ------------------------------------------------------------


@runs_tf_hook_in_v1_sessions
class FinalOpsHook(SessionRunHook):
    """Keeps the values of `final_ops` when the loop ends.

    As in tf.estimator, `end()` evaluates `final_ops` once more: in
    `Estimator.train` (and a model_fn model's `fit`) the training graph runs
    on the next batch for them alone, without its train_op, so a loss is the
    loss of the trained weights on that batch. Variables are read in `end()`.
    Where the loop cannot run a step in `end()` (evaluation, a plain Keras
    model's `fit`, parameter-server training), tensors are fetched on every
    step (no steps are fused while it runs) and the last step's values kept.

    Args:
        final_ops: a tensor / variable / graph name, or a list or dict of them.
        final_ops_feed_dict: not supported (TF2 has no feeds).
    """

    def __init__(self, final_ops: Any, final_ops_feed_dict: Any = None) -> None:
        # Refused when the loop begins: a TF1 session runs TensorFlow's hook,
        # which feeds it (`v1_session`).
        self._refused = (
            None
            if final_ops_feed_dict is None
            else (
                "FinalOpsHook(final_ops_feed_dict=...) is not supported: feed_dict "
                "does not exist in TF2. Compute the values from variables or "
                "from the step's tensors."
            )
        )
        self._final_ops = final_ops
        self._final_ops_values: Any = None
        leaves = [] if final_ops is None else tf.nest.flatten(final_ops)
        self._variables_only = all(as_tf_variable(x) is not None for x in leaves)
        self._last_results: Any = None
        self._run_at_end = False

    @property
    def final_ops_values(self) -> Any:
        tf_hook = tf_hook_of(self)
        if tf_hook is not None:
            return tf_hook.final_ops_values
        return self._final_ops_values

    def steps_until_needed(self, global_step: int) -> int | None:
        return None if self._variables_only or self._run_at_end else 1

    def begin(self) -> None:
        if self._refused is not None:
            raise ValueError(self._refused)
        self._last_results = None
        self._run_at_end = False

    def after_create_session(self, session: Any, coord: Any) -> None:
        self._run_at_end = _runs_fetches(session)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        if self._variables_only or self._run_at_end:
            return None
        return SessionRunArgs(self._final_ops)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if not (self._variables_only or self._run_at_end):
            self._last_results = run_values.results

    def end(self, session: Any) -> None:
        if self._final_ops is None:
            return
        if self._variables_only:
            self._final_ops_values = tf.nest.map_structure(
                lambda v: np.asarray(_live_variable(v).numpy()), self._final_ops
            )
            return
        if self._run_at_end and _runs_fetches(session):
            try:
                self._final_ops_values = session.run(self._final_ops)
            except tf.errors.OutOfRangeError:
                # tf.estimator 2.15 raised here, and lost the final checkpoint.
                logger.warning(
                    "FinalOpsHook: the input has no batch left to evaluate "
                    "final_ops on after the last step; final_ops_values stays None."
                )
            return
        if self._last_results is None:
            logger.warning(
                "FinalOpsHook: no step ran, so final_ops (which hold tensors) have "
                "no values; final_ops_values stays None."
            )
            return
        self._final_ops_values = self._last_results


def _runs_fetches(session: Any) -> bool:
    """Whether `session.run(fetches)` works (the loop's session in training)."""
    try:
        return bool(getattr(session, "runs_fetches", False))
    except RuntimeError:  # the stand-in explains every missing attribute
        return False


def _live_variable(variable: Any) -> Any:
    """The loop's variable of that name (a model_fn's hook holds a stand-in)."""
    context = loop_context.current()
    variable = as_tf_variable(variable)
    if context is None or variable is None:
        return variable
    live = context.saveable().get(variable.name.split(":")[0])
    return live if live is not None else variable


# ---- distributed start ---------------------------------------------------------


@runs_tf_hook_in_v1_sessions
class GlobalStepWaiterHook(SessionRunHook):
    """Delays the first run until the global step reaches `wait_until_step`.

    The step is read from the running loop's global step variable, polled
    every `poll_secs` seconds; something else (another thread) must advance
    it. `max_wait_secs` (None: wait forever, as tf.estimator) bounds the wait
    with a RuntimeError.
    """

    poll_secs = 0.5
    max_wait_secs: float | None = None

    def __init__(self, wait_until_step: int) -> None:
        self._wait_until_step = wait_until_step
        self._worker_is_started = False

    def steps_until_needed(self, global_step: int) -> int | None:
        return None

    def begin(self) -> None:
        self._worker_is_started = False

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        step = _loop_global_step(run_context.global_step)
        assert step is not None
        if step >= self._wait_until_step:
            self._worker_is_started = True
            return None
        logger.info(
            "Waiting for global step %d before starting training.", self._wait_until_step
        )
        started = _clock()
        last_logged_step = 0
        while True:
            step = _loop_global_step(run_context.global_step)
            assert step is not None
            if step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if step - last_logged_step > 1000:
                logger.info(
                    "Waiting for global step %d before starting training. Current "
                    "step is %d.",
                    self._wait_until_step,
                    step,
                )
                last_logged_step = step
            if self.max_wait_secs is not None and _clock() - started >= self.max_wait_secs:
                raise RuntimeError(
                    f"GlobalStepWaiterHook waited {self.max_wait_secs} s for global "
                    f"step {self._wait_until_step}, but it is still {step}. Nothing "
                    "advances the global step while this loop waits."
                )
            time.sleep(self.poll_secs)


# ---- feeds -------------------------------------------------------------------

_FEED_ERROR = (
    "FeedFnHook cannot run: feed_dict does not exist in TF2; feed data through "
    "input_fn (tf.data) instead, e.g. tf.data.Dataset.from_generator."
)


@runs_tf_hook_in_v1_sessions
class FeedFnHook(SessionRunHook):
    """Not supported: TF2 has no feeds. Fails in `begin()` with what to do."""

    def __init__(self, feed_fn: Callable[[], Any]) -> None:
        self.feed_fn = feed_fn

    def steps_until_needed(self, global_step: int) -> int | None:
        return 1

    def begin(self) -> None:
        raise ValueError(_FEED_ERROR)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        raise ValueError(_FEED_ERROR)


def _tensor_name(tensor: Any) -> Any:
    """`name` as `name:0` when it names no output; any other fetch as it is."""
    if isinstance(tensor, str) and ":" not in tensor:
        return tensor + ":0"
    return tensor
