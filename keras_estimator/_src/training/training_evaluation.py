"""When `train_and_evaluate` evaluates, and what happens after an evaluation.

Owns the three pieces `train_and_evaluate` adds to `Estimator.train`:

* `Evaluator` evaluates the latest checkpoint (once per checkpoint) and runs
  the EvalSpec's exporters after it;
* `EvaluateOnSaveListener`, a CheckpointSaverListener, evaluates after
  checkpoint saves at most every `throttle_secs`, and at the end of training;
* `EvaluateEveryNStepsHook` evaluates at every multiple of N global steps,
  saving the checkpoint it evaluates when the RunConfig's cadence did not.

Evaluations run inside training, on the Estimator being trained, right after
the checkpoint they evaluate was written: its variables hold exactly that
checkpoint, so `evaluate()` runs on them without restoring it (see
`evaluator_hook.live_weights`) and reuses the Estimator's compiled eval
function from one evaluation to the next.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

from keras_estimator._src.base.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
    SessionStandIn,
)
from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from keras_estimator._src.distribute import preemption as _preemption
from keras_estimator._src.engine import loop_context
from keras_estimator._src.estimator.early_stopping import checkpoint_step
from keras_estimator._src.estimator.estimator import Estimator, EstimatorInternals
from keras_estimator._src.estimator.evaluator_hook import live_weights
from keras_estimator._src.hooks.basic_hooks import SecondOrStepTimer
from keras_estimator._src.hooks.checkpoint_hooks import CheckpointSaverListener

logger = logging.getLogger("keras_estimator")


class Evaluator:
    """Evaluates the latest checkpoint once and runs the exporters after it.

    Args:
        estimator: the Estimator being trained.
        eval_spec: the `EvalSpec` (input, steps, name, hooks, exporters).
        max_steps: `TrainSpec.max_steps`; an evaluation at or past it is a
            final export.

    Attributes:
        metrics: the last evaluation's results (None before the first).
        export_results: what each exporter returned for it.
    """

    def __init__(self, estimator: Estimator, eval_spec: Any, max_steps: int | None) -> None:
        self._estimator = estimator
        self._spec = eval_spec
        self._max_steps = max_steps
        self.metrics: dict[str, Any] | None = None
        self.export_results: list[Any] | None = None
        self._checkpoint: str | None = None
        self._was_final = False
        for exporter in eval_spec.exporters:
            bind = getattr(exporter, "set_evaluation_name", None)
            if callable(bind):
                bind(eval_spec.name)

    def evaluate_and_export(self, final: bool) -> None:
        """Evaluates the latest checkpoint (unless evaluated already), then exports.

        Args:
            final: this is the evaluation at the end of training. If the
                latest checkpoint was already evaluated without being the
                final export, the exporters that skipped it run again.
        """
        if _preemption.stopping():
            # The model stopped part way, and the grace period is for saving:
            # a restart resumes from the saved step, and evaluates and
            # exports as it trains on.
            logger.warning(
                "Training stopped on SIGTERM: no evaluation or export of its last "
                "checkpoint, and no final one."
            )
            return
        checkpoint = self._estimator.latest_checkpoint()
        if checkpoint is None:
            logger.warning("Estimator is not trained yet: no checkpoint to evaluate.")
            return
        if checkpoint == self._checkpoint:
            if final and not self._was_final and self.metrics is not None:
                self._export_final_only(checkpoint, self.metrics)
            return
        with live_weights(self._estimator):
            self._evaluate(checkpoint, final)

    def evaluate_checkpoint(self, checkpoint: str) -> dict[str, Any]:
        """Restores and evaluates `checkpoint`, then exports (the evaluator task).

        Unlike `evaluate_and_export`, the Estimator is not the one being
        trained: its variables are restored from the checkpoint.

        Returns:
            The evaluation's results.
        """
        self._evaluate(checkpoint, final=False)
        assert self.metrics is not None
        return self.metrics

    def _evaluate(self, checkpoint: str, final: bool) -> None:
        metrics = self._estimator.evaluate(
            self._spec.input_fn,
            steps=self._spec.steps,
            hooks=list(self._spec.hooks),
            checkpoint_path=checkpoint,
            name=self._spec.name,
        )
        # A Python bool, as 2.15 passed exporters (not numpy's, from the step).
        reached_max = bool(
            self._max_steps is not None and metrics["global_step"] >= self._max_steps
        )
        self._checkpoint, self.metrics = checkpoint, metrics
        self._was_final = final or reached_max
        self.export_results = [
            self._export(exporter, checkpoint, metrics, self._was_final)
            for exporter in self._spec.exporters
        ]

    def _export_final_only(self, checkpoint: str, metrics: dict[str, Any]) -> None:
        results = list(self.export_results or [None] * len(self._spec.exporters))
        for index, exporter in enumerate(self._spec.exporters):
            if results[index] is None:
                results[index] = self._export(exporter, checkpoint, metrics, True)
        self.export_results = results
        self._was_final = True

    def _export(
        self, exporter: Any, checkpoint: str, metrics: dict[str, Any], final: bool
    ) -> Any:
        export_path = os.path.join(self._estimator.model_dir, "export", exporter.name)
        return exporter.export(
            estimator=self._estimator,
            export_path=export_path,
            checkpoint_path=checkpoint,
            eval_result=metrics,
            is_the_final_export=final,
        )


class EvaluateOnSaveListener(CheckpointSaverListener):
    """Evaluates after checkpoint saves, throttled, and once at the end.

    The save made when training starts is skipped: it holds the weights of
    the previous run, which that run evaluated at its end.
    """

    def __init__(
        self, evaluator: Evaluator, throttle_secs: float, evaluate_after_saves: bool
    ) -> None:
        self._evaluator = evaluator
        self._throttle_secs = throttle_secs
        self._evaluate_after_saves = evaluate_after_saves
        self._timer = SecondOrStepTimer(every_secs=throttle_secs)
        self._first_save = True

    def begin(self) -> None:
        self._timer.reset()
        self._first_save = True

    def after_save(self, session: Any, global_step_value: int) -> bool | None:
        if self._first_save:
            self._first_save = False
            return None
        if not self._evaluate_after_saves:
            return None
        if not self._timer.should_trigger_for_step(global_step_value):
            logger.info(
                "Skip the current checkpoint eval due to throttle secs (%s secs).",
                self._throttle_secs,
            )
            return None
        self._timer.update_last_triggered_step(global_step_value)
        self._evaluator.evaluate_and_export(final=False)
        return None

    def end(self, session: Any, global_step_value: int) -> None:
        self._evaluator.evaluate_and_export(final=True)


class EvaluateEveryNStepsHook(SessionRunHook):
    """Evaluates at every multiple of `every_n_steps` global steps.

    The evaluation of step N runs at the start of the next run, after every
    hook has seen step N: the RunConfig's CheckpointSaverHook (which runs
    after this hook) may have saved step N by then, and otherwise this hook
    saves it, so a checkpoint is never written twice. The weights are still
    those of step N. When training ends the final evaluation is the saving
    listener's, or this hook's when the RunConfig saves no checkpoints.
    """

    def __init__(
        self,
        evaluator: Evaluator,
        estimator: Estimator,
        every_n_steps: int,
        saving_listeners: Sequence[Any],
        evaluates_at_end: bool,
    ) -> None:
        self._evaluator = evaluator
        self._estimator = estimator
        self._every_n_steps = every_n_steps
        self._listeners = list(saving_listeners)
        self._evaluates_at_end = evaluates_at_end
        self._pending_step: int | None = None

    def steps_until_needed(self, global_step: int) -> int:
        return self._every_n_steps - global_step % self._every_n_steps

    def begin(self) -> None:
        self._pending_step = None

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        if self._pending_step is not None:
            step, self._pending_step = self._pending_step, None
            if self._save(step):
                # The run about to start still happens: stopping takes effect
                # at its end.
                run_context.request_stop()
            self._evaluator.evaluate_and_export(final=False)
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        step = run_context.global_step
        if step % self._every_n_steps == 0:
            self._pending_step = step

    def end(self, session: Any) -> None:
        if not self._evaluates_at_end:
            return
        context = loop_context.current()
        if context is not None:
            self._save(context.global_step())
        self._evaluator.evaluate_and_export(final=True)

    def _save(self, step: int) -> bool:
        """Saves checkpoint `step` unless it is the latest; True to stop training."""
        if checkpoint_step(self._estimator.latest_checkpoint()) == step:
            return False
        context = loop_context.current()
        if context is None:
            raise RuntimeError("train_and_evaluate's evaluation hook ran outside training.")
        session = SessionStandIn()
        for listener in self._listeners:
            listener.before_save(session, step)
        policy = _checkpoint.RetentionPolicy(*EstimatorInternals(self._estimator).retention())
        _checkpoint.save(context.saveable(), self._estimator.model_dir, step, policy)
        stop = False
        for listener in self._listeners:
            stop = bool(listener.after_save(session, step)) or stop
        return stop
