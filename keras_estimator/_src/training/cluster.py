"""`train_and_evaluate` on a cluster: what each TF_CONFIG task type does.

tf.estimator ran one program on every task of a cluster and picked the
task's part from `TF_CONFIG["task"]["type"]`; so does `run_task`:

* `chief` and `worker` train together under the RunConfig's
  `train_distribute` (MultiWorkerMirroredStrategy: every worker trains,
  only the chief writes checkpoints and summaries; see `multi_worker`).
  They return `(None, None)`, as tf.estimator's distributed tasks returned
  nothing.
* `evaluator` (not part of the training cluster) watches model_dir: after
  `EvalSpec.start_delay_secs` it evaluates each new checkpoint, at most once
  every `throttle_secs`, runs the exporters after each evaluation, and
  returns once it has evaluated a checkpoint at or past `TrainSpec.max_steps`
  (or after `evaluator_timeout_secs` without a new checkpoint). tf.estimator's
  evaluator never returned when training stopped short of `max_steps`.
* `ps` tasks, and workers of a cluster with ps tasks, serve the chief's
  parameter-server training (`ps_training`).

The clock and the sleep are module functions so tests can replace them.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import tensorflow as tf

from keras_estimator._src.base import run_config
from keras_estimator._src.base.tf_config import TaskType
from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from keras_estimator._src.distribute import multi_worker as _multi_worker
from keras_estimator._src.engine import ps_training as _ps_training
from keras_estimator._src.tf_internals import distribute
from keras_estimator._src.training.training_evaluation import Evaluator

logger = logging.getLogger("keras_estimator")

# How often the evaluator looks for a new checkpoint.
POLL_SECS = 1.0


def _now() -> float:
    return time.monotonic()


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def run_task(
    estimator: Any,
    train_spec: Any,
    eval_spec: Any,
    evaluator_timeout_secs: float | None,
) -> tuple[dict[str, Any] | None, list[Any] | None]:
    """Runs this task's part of a distributed `train_and_evaluate`.

    Raises:
        ValueError: TF_CONFIG names no task, the task type cannot run here
            (a second evaluator, a legacy `master` beside other tasks), or
            training tasks have no strategy that trains them together.
    """
    config = estimator.config
    task = config.task_type
    if not run_config.names_task(config):
        # RunConfig(train_distribute=...) takes such a TF_CONFIG, as 2.15's
        # did; 2.15's train_and_evaluate then failed inside its strategy.
        raise ValueError(
            f'If "cluster" is set in TF_CONFIG, task type must be set. TF_CONFIG '
            f"names the cluster {config.cluster_spec.as_dict()} but no \"task\", so "
            "train_and_evaluate cannot tell this process's part in it. Add "
            '"task": {"type": ..., "index": ...} to TF_CONFIG on every task, or '
            'remove "cluster" to train and evaluate locally.'
        )
    if task == TaskType.EVALUATOR:
        return run_evaluator(estimator, train_spec, eval_spec, evaluator_timeout_secs)
    if task == TaskType.PS or _ps_training.serves_instead_of_training(config):
        return _run_ps(estimator)
    if task in (TaskType.CHIEF, TaskType.WORKER):
        return _run_trainer(estimator, train_spec)
    if task == "local":
        raise ValueError(
            "`task.type` in TF_CONFIG cannot be `local`: without `cluster` and "
            "`task` in TF_CONFIG, train_and_evaluate runs locally. Remove them, "
            "or name this task chief, worker, ps or evaluator."
        )
    if task != TaskType.MASTER:
        raise ValueError(
            f"Task type {task} is not supported. Supported task types are "
            f"{[TaskType.CHIEF, TaskType.WORKER, TaskType.PS, TaskType.EVALUATOR]}; "
            f"TF_CONFIG names this task {task!r} in the cluster "
            f"{config.cluster_spec.as_dict()}. Rename its job to one of them."
        )
    raise ValueError(
        f'TF_CONFIG task type {task!r} cannot run train_and_evaluate in a cluster '
        f"{config.cluster_spec.as_dict()}: the legacy 'master' job trained with "
        "TF1 sessions. Rename the job to 'chief' and train with "
        "MultiWorkerMirroredStrategy."
    )


def _run_ps(estimator: Any) -> tuple[None, None]:
    """A ps task (or a worker of a ps cluster) serves the chief; never returns."""
    _ps_training.serve(estimator.config)
    return None, None  # not reached: serve() blocks


def _run_trainer(estimator: Any, train_spec: Any) -> tuple[None, None]:
    """A chief or worker trains, in step with the rest of the cluster."""
    config = estimator.config
    # The tf.compat.v1 MultiWorkerMirroredStrategy trains as TF2's (the
    # Estimator runs that view of it).
    strategy = distribute.as_tf2_strategy(config.train_distribute)
    trains_together = _multi_worker.is_multi_worker(
        strategy
    ) or _ps_training.is_parameter_server_strategy(strategy)
    if not trains_together:
        jobs = config.cluster_spec.as_dict()
        raise ValueError(
            f"TF_CONFIG makes this task {config.task_type}:{config.task_id} of the "
            f"training cluster {jobs}, but RunConfig.train_distribute is "
            f"{config.train_distribute!r}, which does not train across tasks: each task would "
            "train a model of its own. Pass train_distribute="
            "keras_estimator.experimental.multi_worker_strategy() (or "
            "tf.distribute.MultiWorkerMirroredStrategy()) on every task."
        )
    logger.info(
        "Task %s:%d trains to max_steps %s; the evaluator task evaluates the "
        "checkpoints the chief writes.",
        config.task_type,
        config.task_id,
        train_spec.max_steps,
    )
    estimator.train(
        train_spec.input_fn,
        max_steps=train_spec.max_steps,
        hooks=list(train_spec.hooks),
        saving_listeners=list(train_spec.saving_listeners),
    )
    return None, None


def run_evaluator(
    estimator: Any,
    train_spec: Any,
    eval_spec: Any,
    timeout_secs: float | None,
) -> tuple[dict[str, Any] | None, list[Any] | None]:
    """Evaluates and exports each new checkpoint until training is done.

    Returns:
        The last evaluation's results and exports; `(None, None)` if no
        checkpoint was evaluated before `timeout_secs` ran out.
    """
    config = estimator.config
    if config.task_id != 0:
        raise ValueError(
            "For distributed training, there can only be one `evaluator` task "
            f"(with task id 0). Given task id {config.task_id}. Invalid TF_CONFIG "
            f'"task"["index"]: {config.task_id} for an "evaluator" task; a cluster '
            'has one evaluator, with index 0. Set "index": 0.'
        )
    max_steps = train_spec.max_steps
    if eval_spec.start_delay_secs:
        logger.info("Waiting %s secs before starting eval.", eval_spec.start_delay_secs)
        _sleep(eval_spec.start_delay_secs)
    evaluator = Evaluator(estimator, eval_spec, max_steps)
    evaluated: str | None = None
    while True:
        checkpoint = _wait_for_new_checkpoint(estimator.model_dir, evaluated, timeout_secs)
        if checkpoint is None:
            logger.warning(
                "No new checkpoint in %s for %s secs: the evaluator stops.",
                estimator.model_dir,
                timeout_secs,
            )
            break
        started = _now()
        evaluated = checkpoint
        try:
            metrics = evaluator.evaluate_checkpoint(checkpoint)
        except tf.errors.NotFoundError as error:
            # The chief keeps only the newest checkpoints; a slow evaluation
            # can lose its checkpoint to a newer one.
            logger.warning(
                "Checkpoint %s disappeared before it was evaluated (%s); waiting "
                "for the next one.",
                checkpoint,
                error.message,
            )
            continue
        step = metrics["global_step"]
        if max_steps is not None and step >= max_steps:
            logger.info(
                "Exiting evaluation, global_step=%s >= train max_steps=%s", step, max_steps
            )
            break
        remaining = eval_spec.throttle_secs - (_now() - started)
        if remaining > 0:
            logger.info("Waiting %f secs before starting next eval run.", remaining)
            _sleep(remaining)
    return evaluator.metrics, evaluator.export_results


def _wait_for_new_checkpoint(
    model_dir: str, last: str | None, timeout_secs: float | None
) -> str | None:
    """The newest checkpoint once it differs from `last`; None after the timeout."""
    deadline = None if timeout_secs is None else _now() + timeout_secs
    logged = False
    while True:
        latest = _checkpoint.latest(model_dir)
        if latest is not None and latest != last:
            return latest
        if deadline is not None and _now() >= deadline:
            return None
        if not logged:
            logger.info("Waiting for new checkpoint at %s", model_dir)
            logged = True
        _sleep(POLL_SECS)
