"""`train_and_evaluate`, with its `TrainSpec` and `EvalSpec`.

Owns the two specs (tf.estimator 2.15's validated namedtuples) and the local
(single-process) run of `train_and_evaluate`:

* Training is one `Estimator.train(input_fn, max_steps, hooks,
  saving_listeners)` call with one more saving listener, which evaluates
  after a checkpoint save when `throttle_secs` have passed since the last
  evaluation, and once more at the end of training unless the last
  checkpoint was just evaluated.
* After each evaluation the EvalSpec's exporters run; `is_the_final_export`
  is True for the evaluation at the end of training (and, as in 2.15, for
  one at or past `max_steps`).
* Training stops early as any training stops early: a hook in
  `TrainSpec.hooks` (e.g. `experimental.stop_if_no_decrease_hook` reading
  the eval dir) requests it; the final evaluation and exports still run.
  Not after SIGTERM (`preemption`): training saves its step and nothing is
  evaluated or exported, as 2.15, which the signal killed, did nothing.
* `eval_every_n_steps` (an extension) evaluates at every multiple of N
  global steps instead, saving a checkpoint there when the RunConfig's
  cadence did not.

The evaluator, the saving listener and the step hook are in
`training_evaluation`.

Differences from tf.estimator 2.15:

* `is_the_final_export` is also True at the end of a training that stopped
  before `max_steps` (or had none); 2.15 then never made a final export.
  If the last checkpoint was already evaluated, only the exporters that
  skipped it are called again, with `is_the_final_export=True`.
* `start_delay_secs` only matters to a separate evaluator task, so it is
  validated and otherwise unused, as in 2.15's local mode.

In a TF_CONFIG cluster each task does its part (`cluster.run_task`): chief
and workers train together, the evaluator task evaluates the checkpoints
and exits once training reached `max_steps` (2.15's evaluator never exited
when training stopped short of it; `evaluator_timeout_secs` bounds the wait
for a new checkpoint), ps tasks serve.
"""

from __future__ import annotations

import collections
import logging
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from keras_estimator._src.base.run_config import RunConfig
from keras_estimator._src.base.tf_config import TaskType
from keras_estimator._src.engine.hook_callback import check_hooks
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.export.exporters import Exporter, ExporterProtocol
from keras_estimator._src.hooks.checkpoint_hooks import CheckpointSaverHook
from keras_estimator._src.training import cluster as _cluster
from keras_estimator._src.training.training_evaluation import (
    EvaluateEveryNStepsHook,
    EvaluateOnSaveListener,
    Evaluator,
)

logger = logging.getLogger("keras_estimator")

_LISTENER_METHODS = ("begin", "before_save", "after_save", "end")


# ---- argument checks -------------------------------------------------------------


def _check_input_fn(input_fn: Any, owner: str) -> None:
    if not callable(input_fn):
        raise TypeError(
            f"{owner}: `input_fn` must be callable, given: {input_fn!r}. Pass the "
            "function that returns the dataset, not its result."
        )


def _check_positive_int(owner: str, name: str, value: Any) -> Any:
    """A step count as given (tf.estimator 2.15 kept a float, which Estimator
    runs up to the next whole step), checked to be a positive number."""
    if value is None:
        return None
    if not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(
            f"{owner}: {name} must be a positive int or None, got {value!r} "
            f"({type(value).__name__})."
        )
    if not value > 0 or not math.isfinite(value):
        raise ValueError(
            f"{owner}: Must specify {name} > 0, given: {value}. Pass a positive "
            "number of steps, or None."
        )
    return value


def _check_seconds(name: str, value: Any, owner: str = "EvalSpec") -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise TypeError(
            f"{owner}: {name} must be a number of seconds, got {value!r} "
            f"({type(value).__name__})."
        )
    if value < 0:
        raise ValueError(
            f"{owner}: Must specify {name} >= 0, given: {value}. Pass 0 for no "
            "delay, or a positive number of seconds."
        )
    return value.item() if isinstance(value, np.number) else value


def _as_tuple(values: Any, owner: str, name: str, expected: str) -> tuple[Any, ...]:
    if values is None:
        return ()
    if isinstance(values, (str, bytes, dict)) or not isinstance(values, Iterable):
        raise TypeError(
            f"{owner}: {name} must be an iterable of {expected}, got {values!r}. "
            f"Wrap a single one in a list: {name}=[...]."
        )
    return tuple(values)


def _check_hooks(hooks: Any, owner: str) -> tuple[Any, ...]:
    hooks = _as_tuple(hooks, owner, "hooks", "SessionRunHooks")
    for hook in hooks:
        if not all(callable(getattr(hook, m, None)) for m in _HOOK_METHODS):
            # 2.15's TrainSpec/EvalSpec words (Estimator's differ).
            raise TypeError(
                f"All hooks must be `SessionRunHook` instances, given: {hook!r}. "
                f"{owner}'s hooks must be SessionRunHooks: subclass "
                "keras_estimator.SessionRunHook."
            )
    return tuple(check_hooks(list(hooks)))


_HOOK_METHODS = ("begin", "after_create_session", "before_run", "after_run", "end")


def _check_saving_listeners(listeners: Any) -> tuple[Any, ...]:
    listeners = _as_tuple(
        listeners, "TrainSpec", "saving_listeners", "CheckpointSaverListeners"
    )
    for listener in listeners:
        missing = [m for m in _LISTENER_METHODS if not callable(getattr(listener, m, None))]
        if missing:
            raise TypeError(
                f"TrainSpec: All saving_listeners must be `CheckpointSaverListener` "
                f"instances, given: {listener!r} (it lacks {missing}). Subclass "
                "keras_estimator.CheckpointSaverListener."
            )
    return listeners


def _check_exporters(exporters: Any) -> tuple[Any, ...]:
    if exporters is None:
        return ()
    if isinstance(exporters, (Exporter, ExporterProtocol)):
        exporters = (exporters,)
    elif not isinstance(exporters, Iterable) or isinstance(exporters, (str, dict)):
        raise TypeError(
            f"EvalSpec: `exporters` must be an Exporter, an iterable of Exporter, "
            f"or `None`, found {exporters!r}."
        )
    exporters = tuple(exporters)
    for exporter in exporters:
        if not isinstance(exporter, (Exporter, ExporterProtocol)):
            raise TypeError(
                f"EvalSpec: `exporters` must be an Exporter, an iterable of "
                f"Exporter, or `None`, found {exporter!r} among them. Use "
                "LatestExporter, BestExporter, FinalExporter or a subclass of "
                "Exporter."
            )
    names = [exporter.name for exporter in exporters]
    for name in names:
        if not name:
            raise ValueError(
                f"EvalSpec: An Exporter cannot have a name that is `None` or empty. "
                f"All exporter names: {names}."
            )
        if not isinstance(name, str):
            raise ValueError(
                f"EvalSpec: An Exporter must have a string name. Given: {name!r} "
                f"({type(name).__name__}). All exporter names: {names}."
            )
    clashing = sorted({name for name in names if names.count(name) > 1})
    if clashing:
        raise ValueError(
            f"EvalSpec: `exporters` must have unique names; {clashing} is used "
            f"more than once. All exporter names: {names}. Each name is an "
            "export directory (model_dir/export/<name>): rename one of them."
        )
    return exporters


# ---- the specs -------------------------------------------------------------------


class TrainSpec(
    collections.namedtuple(
        "TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"]
    )
):
    """The training half of `train_and_evaluate`: input, length, hooks.

    Args:
        input_fn: returns the training dataset of `(features, labels)` (or a
            `(features, labels)` tuple).
        max_steps: the global step to train to; None trains until the input
            ends or a hook stops training.
        hooks: SessionRunHooks for training (early-stopping hooks go here).
        saving_listeners: CheckpointSaverListeners called around each save.

    Raises:
        TypeError: input_fn is not callable, or an argument has the wrong type.
        ValueError: max_steps is not positive.

    Example:
        >>> train_spec = TrainSpec(train_input_fn, max_steps=1000)  # doctest: +SKIP
    """

    __slots__ = ()

    def __new__(
        cls,
        input_fn: Any,
        max_steps: int | None = None,
        hooks: Sequence[Any] | None = None,
        saving_listeners: Sequence[Any] | None = None,
    ) -> TrainSpec:
        _check_input_fn(input_fn, "TrainSpec")
        return super().__new__(
            cls,
            input_fn=input_fn,
            max_steps=_check_positive_int("TrainSpec", "max_steps", max_steps),
            hooks=_check_hooks(hooks, "TrainSpec"),
            saving_listeners=_check_saving_listeners(saving_listeners),
        )


class EvalSpec(
    collections.namedtuple(
        "EvalSpec",
        [
            "input_fn",
            "steps",
            "name",
            "hooks",
            "exporters",
            "start_delay_secs",
            "throttle_secs",
        ],
    )
):
    """The evaluation half of `train_and_evaluate`: input, cadence, exports.

    Args:
        input_fn: returns the evaluation dataset.
        steps: evaluation batches; None evaluates until the input ends.
        name: the evaluation's name; its summaries go to `eval_<name>/`.
        hooks: SessionRunHooks for each evaluation.
        exporters: an `Exporter`, an iterable of them, or None; called after
            each evaluation. Names must be unique.
        start_delay_secs: how long a separate evaluator task waits before its
            first evaluation (unused when training and evaluating locally).
        throttle_secs: evaluate at most once every this many seconds (an
            evaluation also needs a new checkpoint).

    Raises:
        TypeError: input_fn is not callable, or an argument has the wrong type.
        ValueError: a negative delay, a non-positive `steps`, or exporters
            with missing or clashing names.

    Example:
        >>> eval_spec = EvalSpec(eval_input_fn, steps=50, throttle_secs=60)  # doctest: +SKIP
    """

    __slots__ = ()

    def __new__(
        cls,
        input_fn: Any,
        steps: int | None = 100,
        name: str | None = None,
        hooks: Sequence[Any] | None = None,
        exporters: Any = None,
        start_delay_secs: float = 120,
        throttle_secs: float = 600,
    ) -> EvalSpec:
        _check_input_fn(input_fn, "EvalSpec")
        if name is not None and not isinstance(name, str):
            raise TypeError(
                f"EvalSpec: `name` must be string, given: {name!r}. It names the "
                "eval summary directory eval_<name>."
            )
        return super().__new__(
            cls,
            input_fn=input_fn,
            steps=_check_positive_int("EvalSpec", "steps", steps),
            name=name,
            hooks=_check_hooks(hooks, "EvalSpec"),
            exporters=_check_exporters(exporters),
            start_delay_secs=_check_seconds("start_delay_secs", start_delay_secs),
            throttle_secs=_check_seconds("throttle_secs", throttle_secs),
        )


# ---- train_and_evaluate ------------------------------------------------------------


def _runs_locally(config: RunConfig) -> bool:
    """No cluster, or a cluster of one task that is the chief."""
    if config.task_type == TaskType.EVALUATOR:
        return False
    cluster = config.cluster_spec
    jobs = list(cluster.jobs) if cluster is not None else []
    if not jobs:
        return True
    num_tasks = sum(cluster.num_tasks(job) for job in jobs)
    return num_tasks == 1 and bool(config.is_chief)


def train_and_evaluate(
    estimator: Estimator,
    train_spec: TrainSpec,
    eval_spec: EvalSpec,
    *,
    eval_every_n_steps: int | None = None,
    evaluator_timeout_secs: float | None = None,
) -> tuple[dict[str, Any] | None, list[Any] | None]:
    """Trains `estimator`, evaluating and exporting along the way.

    Training runs to `train_spec.max_steps` (or until the input ends or a
    hook stops it). After a checkpoint save, if at least
    `eval_spec.throttle_secs` passed since the last evaluation, the new
    checkpoint is evaluated and the exporters run; the last checkpoint is
    evaluated at the end unless it just was. Evaluations write summaries to
    `estimator.eval_dir(eval_spec.name)`, where early-stopping hooks in
    `train_spec.hooks` can read them. How often checkpoints are saved is the
    RunConfig's `save_checkpoints_steps` / `save_checkpoints_secs`.

    Args:
        estimator: the `Estimator` to train and evaluate.
        train_spec: a `TrainSpec`.
        eval_spec: an `EvalSpec`.
        eval_every_n_steps: evaluate at every multiple of this many global
            steps instead of after throttled checkpoint saves (a checkpoint
            is saved there if the RunConfig's cadence did not); then
            `throttle_secs` is not used. Local runs only. A keyword-only
            extension.
        evaluator_timeout_secs: on an `evaluator` task, stop after this many
            seconds without a new checkpoint (None: wait as long as it takes;
            the evaluator always stops once it evaluated a checkpoint at or
            past `train_spec.max_steps`). A keyword-only extension.

    Returns:
        `(metrics, export_results)`: the last evaluation's results and what
        each exporter returned after it; `(None, None)` if nothing was
        evaluated (training had already reached `max_steps`), and on the
        training tasks of a cluster.

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: the RunConfig saves no checkpoints and no
            `eval_every_n_steps` is given (nothing would trigger evaluations),
            or `TF_CONFIG` gives this task a part it cannot play (see
            `cluster.run_task`).

    Example:
        >>> metrics, exports = train_and_evaluate(
        ...     est, TrainSpec(train_input_fn, max_steps=1000),
        ...     EvalSpec(eval_input_fn, throttle_secs=60))  # doctest: +SKIP
    """
    if not isinstance(estimator, Estimator):
        raise TypeError(
            "`estimator` must have type `tf.estimator.Estimator` (a "
            f"keras_estimator.Estimator), got {type(estimator).__name__}."
        )
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(
            "`train_spec` must have type `tf.estimator.TrainSpec` (a "
            "keras_estimator.TrainSpec), got "
            f"{type(train_spec).__name__}. Build it with TrainSpec(input_fn, ...)."
        )
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(
            "`eval_spec` must have type `tf.estimator.EvalSpec` (a "
            "keras_estimator.EvalSpec), got "
            f"{type(eval_spec).__name__}. Build it with EvalSpec(input_fn, ...)."
        )
    every = _check_positive_int("train_and_evaluate", "eval_every_n_steps", eval_every_n_steps)
    config = estimator.config
    if evaluator_timeout_secs is not None:
        _check_seconds(
            "evaluator_timeout_secs", evaluator_timeout_secs, "train_and_evaluate"
        )
    # Estimator.train adds a CheckpointSaverHook (which calls the saving
    # listeners) only when the RunConfig has a checkpoint cadence.
    saves_checkpoints = bool(config.save_checkpoints_steps or config.save_checkpoints_secs)
    if not _runs_locally(config):
        if every is not None:
            raise ValueError(
                f"eval_every_n_steps={every} is for local train_and_evaluate; in a "
                "cluster the evaluator task evaluates each checkpoint the chief "
                "saves. Set RunConfig(save_checkpoints_steps=...) instead."
            )
        if not saves_checkpoints and config.task_type != TaskType.PS:
            raise ValueError(
                "In a cluster the evaluator task evaluates the checkpoints the "
                "chief saves, but the RunConfig saves none (save_checkpoints_steps "
                "and save_checkpoints_secs are None). Set one of them."
            )
        return _cluster.run_task(estimator, train_spec, eval_spec, evaluator_timeout_secs)
    if every is None and not saves_checkpoints:
        raise ValueError(
            "train_and_evaluate evaluates after checkpoint saves, but the RunConfig "
            "saves none (save_checkpoints_steps and save_checkpoints_secs are "
            "None). Set one of them, or pass eval_every_n_steps."
        )
    logger.info("Running training and evaluation locally (non-distributed).")
    evaluator = Evaluator(estimator, eval_spec, train_spec.max_steps)
    listener = EvaluateOnSaveListener(
        evaluator, eval_spec.throttle_secs, evaluate_after_saves=every is None
    )
    hooks = list(train_spec.hooks)
    if every is not None:
        hooks.append(
            EvaluateEveryNStepsHook(
                evaluator,
                estimator,
                every,
                train_spec.saving_listeners,
                evaluates_at_end=not saves_checkpoints,
            )
        )
        logger.info("Evaluating every %d global steps.", every)
    else:
        logger.info(
            "Evaluating after checkpoint saves (save_checkpoints_steps %s or "
            "save_checkpoints_secs %s), at most every %s secs.",
            config.save_checkpoints_steps,
            config.save_checkpoints_secs,
            eval_spec.throttle_secs,
        )
    # Listeners run around checkpoint saves; with no saver (evaluations
    # every n steps, no checkpoint cadence) the hook above calls the
    # program's listeners itself, and Estimator.train would refuse them.
    has_saver = saves_checkpoints or any(
        isinstance(hook, CheckpointSaverHook) for hook in hooks
    )
    estimator.train(
        train_spec.input_fn,
        max_steps=train_spec.max_steps,
        hooks=hooks,
        saving_listeners=[*train_spec.saving_listeners, listener] if has_saver else [],
    )
    return evaluator.metrics, evaluator.export_results
