"""`InMemoryEvaluatorHook`: evaluate the weights being trained, while training.

tf.estimator built a second graph for evaluation and, at each evaluation,
copied the training session's variable values into it. Here the training
Estimator's variables are live objects shared by every mode, so evaluation
can run on them directly: the hook calls `estimator.evaluate(...)` from
inside the training loop (Keras' `evaluate` nested in `fit`).

How the current weights are evaluated: `Estimator.evaluate` restores the
latest checkpoint unless it is the one the Estimator's store already holds.
During training the store holds weights newer than any checkpoint, and the
checkpoint saver writes new checkpoints the Estimator has not "synced", so a
plain `evaluate()` would overwrite the live weights with a checkpoint. The
hook therefore marks the latest checkpoint as synced for the duration of the
call, through `EstimatorInternals.latest_checkpoint_held` (only variables the
evaluation creates for the first time are then read from it, as any
evaluate does), and puts the marker back afterwards. Everything else is the
ordinary `evaluate()`: the metric variables are reset, the evaluation
hooks run, and the summaries go to `estimator.eval_dir(name)` at the
current global step. The training model's per-call state that `evaluate()`
touches (its step plan, the chunk callback, fetch requests, stop flags) is
saved and restored around the call, so training continues as it was.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from keras_estimator._src.base.session_run_hook import (
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from keras_estimator._src.distribute import preemption as _preemption
from keras_estimator._src.engine import loop_context
from keras_estimator._src.engine.hook_callback import check_hooks
from keras_estimator._src.estimator.early_stopping import as_estimator
from keras_estimator._src.estimator.estimator import (
    Estimator,
    EstimatorInternals,
    check_steps,
)
from keras_estimator._src.hooks.basic_hooks import SecondOrStepTimer

logger = logging.getLogger("keras_estimator")

class InMemoryEvaluatorHook(SessionRunHook):
    """Evaluates the model being trained, without a checkpoint, during training.

    Evaluates once when training starts, then every `every_n_iter` global
    steps, and once when training ends (unless the last evaluation was at
    that step already, or SIGTERM stopped training). Each evaluation is
    `estimator.evaluate(input_fn, steps, hooks, name=name)` on the current
    in-memory weights, and writes its summaries to
    `estimator.eval_dir(name)`, so `stop_if_*_hook`s can read them.

    Args:
        estimator: the `keras_estimator.Estimator` whose `train()` runs this
            hook.
        input_fn: the evaluation input_fn, as for `evaluate`.
        steps: evaluation batches (None: until the input ends).
        hooks: SessionRunHooks for each evaluation.
        name: the evaluation's name (summaries in `eval_<name>`).
        every_n_iter: evaluate every this many global steps.

    Raises:
        ValueError: `every_n_iter` is not positive, or the config describes
            a multi-machine cluster (evaluate in a separate task there).
        TypeError: `estimator` is not an Estimator, or `hooks` are not hooks.

    Example:
        >>> evaluator = InMemoryEvaluatorHook(est, eval_input_fn, every_n_iter=500)  # doctest: +SKIP
        >>> est.train(train_input_fn, hooks=[evaluator])  # doctest: +SKIP
    """

    def __init__(
        self,
        estimator: Any,
        input_fn: Callable[..., Any],
        steps: int | None = None,
        hooks: Sequence[Any] | None = None,
        name: str | None = None,
        every_n_iter: int = 100,
    ) -> None:
        if (
            every_n_iter is None
            or isinstance(every_n_iter, bool)
            or not isinstance(every_n_iter, (int, np.integer))
            or every_n_iter <= 0
        ):
            raise ValueError(
                f"invalid every_n_iter={every_n_iter!r}: pass a positive int, the "
                "number of training steps between evaluations."
            )
        estimator = as_estimator(estimator)
        if not callable(input_fn):
            raise TypeError(
                f"input_fn must be callable, got {type(input_fn).__name__}: pass "
                "the function that returns the evaluation dataset."
            )
        config = estimator.config
        if config.num_ps_replicas > 0 or config.num_worker_replicas > 1:
            raise ValueError(
                "InMemoryEvaluatorHook supports only single machine (aka Local) "
                f"setting; TF_CONFIG describes {config.num_worker_replicas} workers "
                f"and {config.num_ps_replicas} parameter servers. Evaluate in a "
                "separate evaluator task instead."
            )
        steps, _ = check_steps(steps, None)
        self._estimator = estimator
        self._input_fn = input_fn
        self._steps = steps
        self._hooks = check_hooks(hooks)
        self._name = name
        self._every_n_iter = int(every_n_iter)
        self._timer = SecondOrStepTimer(every_steps=self._every_n_iter)
        self._last_evaluated_step: int | None = None

    def steps_until_needed(self, global_step: int) -> int | None:
        return self._timer.steps_until_trigger(global_step)

    def begin(self) -> None:
        self._timer.reset()
        self._last_evaluated_step = None
        context = loop_context.current()
        if context is None:
            return
        own_step = EstimatorInternals(self._estimator).global_step_variable()
        if own_step is not context.global_step_variable:
            raise ValueError(
                "InMemoryEvaluatorHook evaluates the weights of the Estimator "
                "given to it, but it runs in the training of another Estimator. "
                "Pass the Estimator whose train() runs the hook."
            )

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Evaluates the weights training starts from."""
        self._evaluate(self._current_step())

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        step = run_context.global_step
        if self._timer.should_trigger_for_step(step):
            self._evaluate(step)

    def end(self, session: Any) -> None:
        """Evaluates the final weights, unless SIGTERM stopped training."""
        step = self._current_step()
        if step is not None and step == self._last_evaluated_step:
            return  # these weights were just evaluated
        if _preemption.stopping():
            # The grace period is for the save, and the weights are those of
            # a training stopped part way (2.15, killed, evaluated nothing).
            logger.warning(
                "Training stopped on SIGTERM at step %s: InMemoryEvaluatorHook "
                "makes no final evaluation.",
                step,
            )
            return
        self._evaluate(step)

    # ---- internals ---------------------------------------------------------------
    def _current_step(self) -> int | None:
        context = loop_context.current()
        if context is not None:
            return context.global_step()
        variable = EstimatorInternals(self._estimator).global_step_variable()
        return None if variable is None else int(variable.numpy())

    def _evaluate(self, step: int | None) -> dict[str, Any]:
        with live_weights(self._estimator):
            results = self._estimator.evaluate(
                self._input_fn, steps=self._steps, hooks=self._hooks, name=self._name
            )
        fields = EstimatorInternals(self._estimator).eval_scaffold_session_fields()
        if fields:
            # 2.15's error, when training began: its in-memory evaluation
            # copies the training weights, which a Saver's keys or an
            # init_fn would bypass.
            raise ValueError(
                f"InMemoryEvaluator does not support custom {fields[0]}: the EVAL "
                f"EstimatorSpec's Scaffold gives {fields[0]}. Return it in EVAL mode "
                "only for evaluate() (not with InMemoryEvaluatorHook), or leave "
                f"the Scaffold's {fields[0]} out."
            )
        evaluated = int(results.get("global_step", step or 0))
        self._timer.update_last_triggered_step(evaluated)
        self._last_evaluated_step = evaluated
        logger.info(
            "Evaluation at step %d: %s",
            evaluated,
            ", ".join(f"{k} = {v}" for k, v in sorted(results.items())),
        )
        return results


@contextlib.contextmanager
def live_weights(estimator: Estimator) -> Iterator[None]:
    """Makes `estimator.evaluate()` use the in-memory weights; see the module doc."""
    internals = EstimatorInternals(estimator)
    model = internals.model_if_made
    # The evaluation runs under a run plan of its own (the training run's
    # plan, fetches and chunk callback are as they were after it); only
    # Keras' own stop flag is shared.
    stop_training = bool(model.stop_training) if model is not None else False
    try:
        with internals.latest_checkpoint_held():
            yield
    finally:
        if model is not None:
            model.stop_training = stop_training
