"""Early stopping: `tf.estimator.experimental.stop_if_*_hook` and friends.

Each hook checks, every `run_every_secs` seconds or every `run_every_steps`
global steps (exactly one of the two), a `should_stop_fn()`; when it returns
True the hook calls `run_context.request_stop()` and training ends after
that run. The `stop_if_*` functions build `should_stop_fn` from the eval
metrics that `Estimator.evaluate` (or `InMemoryEvaluatorHook`) wrote as
summaries into an eval directory.

Differences from tf.estimator 2.15:

* With `RunConfig(train_distribute=...)` tf.estimator raised (its hooks
  shared the decision through a synchronised stop variable,
  tensorflow/tensorflow#51525). Here the hook only requests a stop and the
  loop ends every replica, so a distribution strategy needs nothing else.
  Every task checks `should_stop_fn` itself (tf.estimator's non-chief
  tasks waited for the chief's stop variable instead).
* The check uses the loop's global step (`run_context.global_step`) and
  fetches nothing, so the loop may fuse the steps between two checks
  (`steps_until_needed`); a step schedule checks on the same global steps
  whether or not steps are fused.
* A metric missing from the eval summaries is skipped with a warning (tf
  raised `KeyError` from inside training when another metric was present at
  a step), and both TF1 `simple_value` and TF2 tensor summaries are read.
"""

from __future__ import annotations

import collections
import logging
import operator
import os
import re
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator._src.base.session_run_hook import (
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from keras_estimator._src.checkpoint import checkpoints, eval_events
from keras_estimator._src.engine.model_fn_model import ModelFnModel
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.hooks.basic_hooks import SecondOrStepTimer, StopAtStepHook

logger = logging.getLogger("keras_estimator")

_CHECKPOINT_STEP = re.compile(r"-(\d+)$")


def _sleep(secs: float) -> None:
    """Sleeps `secs` seconds (a function so tests can replace it)."""
    time.sleep(secs)


# ---- reading eval summaries ------------------------------------------------------


def read_eval_metrics(eval_dir: str) -> collections.OrderedDict[int, dict[str, float]]:
    """Reads the scalar eval metrics summarised in `eval_dir`'s event files.

    Both TF1 summaries (`value.simple_value`) and TF2 ones (scalar tensors,
    as `tf.summary.scalar` writes them) are read; non-scalar and non-numeric
    tensors (histograms, text) are left out. When the same metric appears
    more than once for one step, the latest event (by wall time, then by
    file and position) wins.

    Args:
        eval_dir: directory holding summary event files; a missing directory
            holds no metrics.

    Returns:
        An OrderedDict of global step -> {metric name: value}, by step.
    """
    return eval_events.read_directory(eval_dir)


# ---- the hooks -------------------------------------------------------------------


class _StopOnPredicateHook(SessionRunHook):
    """Requests stop when `should_stop_fn()` returns True; checks on a timer."""

    def __init__(
        self,
        should_stop_fn: Callable[[], bool],
        run_every_secs: float | None = 60,
        run_every_steps: int | None = None,
    ) -> None:
        if not callable(should_stop_fn):
            raise TypeError(
                f"`should_stop_fn` must be callable, got {should_stop_fn!r}. Pass "
                "a function of no arguments that returns True to stop."
            )
        self._should_stop_fn = should_stop_fn
        self._timer = SecondOrStepTimer(
            every_secs=run_every_secs, every_steps=run_every_steps
        )

    def steps_until_needed(self, global_step: int) -> int | None:
        return self._timer.steps_until_trigger(global_step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        global_step = _global_step(run_context)
        if not self._timer.should_trigger_for_step(global_step):
            return
        self._timer.update_last_triggered_step(global_step)
        if self._should_stop_fn():
            logger.info("Requesting early stopping at global step %d", global_step)
            run_context.request_stop()


def _global_step(run_context: Any) -> int:
    """The global step a run ended at, in this package's loop or a TF1 session.

    2.15's hooks also ran in a `tf.compat.v1.train.MonitoredSession` of the
    program's own, whose run context has no step: there the graph's global
    step is read through the session.
    """
    step = getattr(run_context, "global_step", None)
    if step is not None:
        return int(step)
    graph_step = tf.compat.v1.train.get_global_step()
    if graph_step is None:
        raise ValueError(
            "Early-stopping hooks need a global step: the session's graph has "
            "none. Create it with tf.compat.v1.train.get_or_create_global_step() "
            "before the MonitoredSession."
        )
    return int(tf.compat.v1.train.global_step(run_context.session, graph_step))


def as_estimator(estimator: Any) -> Estimator:
    """`estimator`, or the Estimator a `model_fn_to_keras` model trains through.

    Hooks that read an Estimator's evaluations (the `stop_if_*` hooks,
    `InMemoryEvaluatorHook`) also take the Keras model whose `fit` they run
    in (through `HookCallback`).

    Raises:
        TypeError: anything else, with what to pass.
    """
    if isinstance(estimator, Estimator):
        return estimator
    bound = getattr(estimator, "bound_estimator", None)
    if isinstance(estimator, ModelFnModel) and isinstance(bound, Estimator):
        return bound
    raise TypeError(
        "`estimator` must be a keras_estimator.Estimator, or a model from "
        "keras_estimator.model_fn_to_keras (in whose fit the hook runs), got "
        f"{type(estimator).__name__}. A plain Keras model has no model_dir of "
        "evaluations: use keras.callbacks.EarlyStopping there."
    )


def _check_schedule(run_every_secs: Any, run_every_steps: Any) -> None:
    if run_every_secs is not None and run_every_steps is not None:
        raise ValueError(
            "Only one of `run_every_secs` and `run_every_steps` must be set (got "
            f"run_every_secs={run_every_secs!r}, run_every_steps={run_every_steps!r}). "
            "run_every_secs defaults to 60: pass run_every_secs=None together "
            "with run_every_steps."
        )
    if run_every_secs is None and run_every_steps is None:
        raise ValueError(
            "One of `run_every_secs` and `run_every_steps` must be set (both are "
            "None). Pass e.g. run_every_secs=60 or run_every_steps=100."
        )
    if run_every_steps is not None and (
        isinstance(run_every_steps, bool)
        or not isinstance(run_every_steps, (int, np.integer))
        or run_every_steps <= 0
    ):
        raise ValueError(
            f"run_every_steps must be a positive int, got {run_every_steps!r}."
        )
    if run_every_secs is not None and (
        isinstance(run_every_secs, bool)
        or not isinstance(run_every_secs, (int, float, np.number))
        or run_every_secs < 0
    ):
        raise ValueError(
            f"run_every_secs must be a non-negative number, got {run_every_secs!r}."
        )


def make_early_stopping_hook(
    estimator: Any,
    should_stop_fn: Callable[[], bool],
    run_every_secs: float | None = 60,
    run_every_steps: int | None = None,
) -> SessionRunHook:
    """A hook that stops training when `should_stop_fn()` returns True.

    Args:
        estimator: the `keras_estimator.Estimator` being trained.
        should_stop_fn: function of no arguments returning a bool.
        run_every_secs: call `should_stop_fn` at most once every this many
            seconds (checked at run boundaries). Defaults to 60.
        run_every_steps: call it every this many global steps instead (pass
            `run_every_secs=None` with it). The first check is after the
            first step.

    Returns:
        A SessionRunHook for `Estimator.train(hooks=...)`.

    Raises:
        TypeError: `estimator` is not an Estimator, or `should_stop_fn` is
            not callable.
        ValueError: not exactly one of `run_every_secs`, `run_every_steps`.

    Example:
        >>> hook = make_early_stopping_hook(est, lambda: False, run_every_secs=None,
        ...                                 run_every_steps=100)  # doctest: +SKIP
        >>> est.train(input_fn, hooks=[hook])  # doctest: +SKIP
    """
    estimator = as_estimator(estimator)
    _check_schedule(run_every_secs, run_every_steps)
    return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps)


class _MissingMetricWarning:
    """Warns once per eval dir that a metric is absent from its summaries."""

    def __init__(self, metric_name: str, eval_dir: str) -> None:
        self._metric_name = metric_name
        self._eval_dir = eval_dir
        self._warned = False

    def check(self, eval_results: dict[int, dict[str, float]], min_steps: int) -> None:
        if self._warned:
            return
        seen = {
            name
            for step, metrics in eval_results.items()
            if step >= min_steps
            for name in metrics
        }
        if seen and self._metric_name not in seen:
            self._warned = True
            logger.warning(
                "Early stopping: metric %r is not in the eval summaries of %s, "
                "which hold %s; training continues. Pass one of those as "
                "metric_name (or the eval_dir the metric is written to).",
                self._metric_name,
                self._eval_dir,
                sorted(seen),
            )


def _stop_if_threshold_crossed_hook(
    estimator: Any,
    metric_name: str,
    threshold: float,
    higher_is_better: bool,
    eval_dir: str | None,
    min_steps: int,
    run_every_secs: float | None,
    run_every_steps: int | None,
) -> SessionRunHook:
    estimator = as_estimator(estimator)
    _check_schedule(run_every_secs, run_every_steps)
    directory = eval_dir if eval_dir is not None else estimator.eval_dir()
    is_lhs_better = operator.gt if higher_is_better else operator.lt
    greater_or_lesser = "greater than" if higher_is_better else "less than"
    missing = _MissingMetricWarning(metric_name, directory)

    def stop_if_threshold_crossed_fn() -> bool:
        eval_results = read_eval_metrics(directory)
        missing.check(eval_results, min_steps)
        for step, metrics in eval_results.items():
            if step < min_steps or metric_name not in metrics:
                continue
            value = metrics[metric_name]
            if is_lhs_better(value, threshold):
                logger.info(
                    'At step %s, metric "%s" has value %s which is %s the '
                    "configured threshold (%s) for early stopping.",
                    step,
                    metric_name,
                    value,
                    greater_or_lesser,
                    threshold,
                )
                return True
        return False

    return make_early_stopping_hook(
        estimator,
        stop_if_threshold_crossed_fn,
        run_every_secs=run_every_secs,
        run_every_steps=run_every_steps,
    )


def _stop_if_no_metric_improvement_hook(
    estimator: Any,
    metric_name: str,
    max_steps_without_improvement: int,
    higher_is_better: bool,
    eval_dir: str | None,
    min_steps: int,
    run_every_secs: float | None,
    run_every_steps: int | None,
) -> SessionRunHook:
    estimator = as_estimator(estimator)
    _check_schedule(run_every_secs, run_every_steps)
    directory = eval_dir if eval_dir is not None else estimator.eval_dir()
    is_lhs_better = operator.gt if higher_is_better else operator.lt
    increase_or_decrease = "increase" if higher_is_better else "decrease"
    missing = _MissingMetricWarning(metric_name, directory)

    def stop_if_no_metric_improvement_fn() -> bool:
        eval_results = read_eval_metrics(directory)
        missing.check(eval_results, min_steps)
        best_value: float | None = None
        best_step = 0
        for step, metrics in eval_results.items():
            if step < min_steps or metric_name not in metrics:
                continue
            value = metrics[metric_name]
            if best_value is None or is_lhs_better(value, best_value):
                best_value = value
                best_step = step
            if step - best_step >= max_steps_without_improvement:
                logger.info(
                    'No %s in metric "%s" for %s steps, which is greater than or '
                    "equal to max steps (%s) configured for early stopping.",
                    increase_or_decrease,
                    metric_name,
                    step - best_step,
                    max_steps_without_improvement,
                )
                return True
        return False

    return make_early_stopping_hook(
        estimator,
        stop_if_no_metric_improvement_fn,
        run_every_secs=run_every_secs,
        run_every_steps=run_every_steps,
    )


def stop_if_higher_hook(
    estimator: Any,
    metric_name: str,
    threshold: float,
    eval_dir: str | None = None,
    min_steps: int = 0,
    run_every_secs: float | None = 60,
    run_every_steps: int | None = None,
) -> SessionRunHook:
    """A hook that stops training once `metric_name` was above `threshold`.

    Args:
        estimator: the `keras_estimator.Estimator` being trained.
        metric_name: the metric to track ("loss", "accuracy", ...).
        threshold: stop when an eval result is strictly greater than this.
        eval_dir: where the eval summaries are; default `estimator.eval_dir()`
            (use `estimator.eval_dir(name)` for `evaluate(name=...)`).
        min_steps: eval results at global steps below this are ignored.
        run_every_secs / run_every_steps: how often to check (exactly one;
            pass `run_every_secs=None` with `run_every_steps`).

    Example:
        >>> hook = stop_if_higher_hook(est, "accuracy", 0.9)  # doctest: +SKIP
    """
    return _stop_if_threshold_crossed_hook(
        estimator, metric_name, threshold, True, eval_dir, min_steps,
        run_every_secs, run_every_steps,
    )


def stop_if_lower_hook(
    estimator: Any,
    metric_name: str,
    threshold: float,
    eval_dir: str | None = None,
    min_steps: int = 0,
    run_every_secs: float | None = 60,
    run_every_steps: int | None = None,
) -> SessionRunHook:
    """A hook that stops training once `metric_name` was below `threshold`.

    Arguments as `stop_if_higher_hook`; stops when an eval result is strictly
    less than `threshold`.

    Example:
        >>> hook = stop_if_lower_hook(est, "loss", 0.1)  # doctest: +SKIP
    """
    return _stop_if_threshold_crossed_hook(
        estimator, metric_name, threshold, False, eval_dir, min_steps,
        run_every_secs, run_every_steps,
    )


def stop_if_no_increase_hook(
    estimator: Any,
    metric_name: str,
    max_steps_without_increase: int,
    eval_dir: str | None = None,
    min_steps: int = 0,
    run_every_secs: float | None = 60,
    run_every_steps: int | None = None,
) -> SessionRunHook:
    """A hook that stops training when `metric_name` stopped increasing.

    Stops once some eval result lies `max_steps_without_increase` or more
    global steps after the best (highest) result before it.

    Arguments otherwise as `stop_if_higher_hook`.

    Example:
        >>> hook = stop_if_no_increase_hook(est, "accuracy", 1000)  # doctest: +SKIP
    """
    return _stop_if_no_metric_improvement_hook(
        estimator, metric_name, max_steps_without_increase, True, eval_dir,
        min_steps, run_every_secs, run_every_steps,
    )


def stop_if_no_decrease_hook(
    estimator: Any,
    metric_name: str,
    max_steps_without_decrease: int,
    eval_dir: str | None = None,
    min_steps: int = 0,
    run_every_secs: float | None = 60,
    run_every_steps: int | None = None,
) -> SessionRunHook:
    """A hook that stops training when `metric_name` stopped decreasing.

    Stops once some eval result lies `max_steps_without_decrease` or more
    global steps after the best (lowest) result before it.

    Arguments otherwise as `stop_if_higher_hook`.

    Example:
        >>> hook = stop_if_no_decrease_hook(est, "loss", 1000)  # doctest: +SKIP
    """
    return _stop_if_no_metric_improvement_hook(
        estimator, metric_name, max_steps_without_decrease, False, eval_dir,
        min_steps, run_every_secs, run_every_steps,
    )


# ---- stopping at a checkpoint step -------------------------------------------------


def checkpoint_step(path: str | None) -> int:
    """The global step of checkpoint `path` (0 for None).

    Read from the `model.ckpt-<step>` name, or from the checkpoint's
    `global_step` variable when the name has no step.
    """
    if path is None:
        return 0
    match = _CHECKPOINT_STEP.search(os.path.basename(path))
    if match:
        return int(match.group(1))
    return checkpoints.step_of(path)


class _StopAtCheckpointStepHook(SessionRunHook):
    """Requests stop once model_dir holds a checkpoint at `last_step` or later.

    From the run that reaches global step `last_step` on, each run ends with
    a look at the latest checkpoint; while it is older than `last_step` the
    hook sleeps `wait_after_file_check_secs` (throttling reads of a shared
    file system) and lets the next run go, as tf.estimator did.
    """

    def __init__(
        self, estimator: Any, last_step: int, wait_after_file_check_secs: float = 30
    ) -> None:
        self._estimator = estimator
        self._last_step = last_step
        self._wait_after_file_check_secs = wait_after_file_check_secs

    def steps_until_needed(self, global_step: int) -> int | None:
        return max(self._last_step - global_step, 1)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if _global_step(run_context) < self._last_step:
            return
        step = checkpoint_step(self._estimator.latest_checkpoint())
        if step >= self._last_step:
            run_context.request_stop()
            return
        logger.info(
            "Waiting for a checkpoint at step %d (latest is at step %d).",
            self._last_step,
            step,
        )
        _sleep(self._wait_after_file_check_secs)


def make_stop_at_checkpoint_step_hook(
    estimator: Any, last_step: int, wait_after_file_check_secs: float = 30
) -> SessionRunHook:
    """A hook that stops training at `last_step`, on every task of a cluster.

    On the chief (`estimator.config.is_chief`) it is
    `StopAtStepHook(last_step=last_step)`. Other tasks stop once the chief's
    checkpoint at `last_step` (or later) is in `estimator.model_dir`,
    checking after every run from global step `last_step` on and sleeping
    `wait_after_file_check_secs` after each check that finds an older one.

    Raises:
        TypeError: `estimator` is not an Estimator.
        ValueError: `last_step` is not a non-negative int, or the wait is
            negative.
    """
    estimator = as_estimator(estimator)
    if (
        last_step is None
        or isinstance(last_step, bool)
        or not isinstance(last_step, (int, np.integer))
        or last_step < 0
    ):
        raise ValueError(
            f"last_step must be specified as a non-negative int, got {last_step!r}."
        )
    if wait_after_file_check_secs is None or wait_after_file_check_secs < 0:
        raise ValueError(
            "wait_after_file_check_secs must be a non-negative number, got "
            f"{wait_after_file_check_secs!r}."
        )
    if estimator.config.is_chief:
        return StopAtStepHook(last_step=int(last_step))
    return _StopAtCheckpointStepHook(
        estimator, int(last_step), wait_after_file_check_secs
    )
