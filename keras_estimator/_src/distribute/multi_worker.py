"""Training on several worker processes with MultiWorkerMirroredStrategy.

Under `tf.distribute.MultiWorkerMirroredStrategy` every worker process runs
the same program; each training step is a collective (the gradients are
all-reduced), and TensorFlow matches the collectives of the workers by the
order in which each worker calls its compiled functions. So every worker
must call the same functions, with the same number of steps, in the same
order, or they wait on each other forever. Hooks make that hard: the chief
has hooks the others lack (checkpoints, summaries, steps/sec), and a hook on
a timer (`every_n_secs`, `save_checkpoints_secs`) fires at different steps on
different workers. This module owns what keeps them in step:

* `Agreement`: before each run, the workers agree on how many steps it
  covers (the fewest any worker allows) and on whether it is a one-step run
  that fetches hook values (if any worker's hooks fetch); after each run, on
  whether to stop (if any worker stops). A worker's hooks still get exactly
  what they asked for; fetched values are the worker's own, as a TF1 hook
  saw its own graph's.
* `StopTogether`, the last callback of a multi-worker loop, applies the stop
  agreement, and tells the workers when it comes from a worker's SIGTERM.
* `check_same_step` and `barrier`: every worker restores the same checkpoint
  and sees the chief's final checkpoint before the next call.
* Only the chief writes to model_dir (`writes_to_model_dir`); other workers
  export to a private temporary directory.
* `explain_cluster_errors`: a lost worker becomes a RuntimeError naming it.
* `shard_by_policy`: the dataset's auto-shard policy, for input_fns that
  take no `input_context`.

`multi_worker_strategy` makes the strategy with bounded connection timeouts.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import tempfile
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from keras_estimator._src.base import fn_args as _fn_args
from keras_estimator._src.base.tf_config import TaskType, _parse_tf_config
from keras_estimator._src.distribute import preemption as _preemption
from keras_estimator._src.tf_internals import distribute

logger = logging.getLogger("keras_estimator")

_TRAINING_JOBS = (TaskType.CHIEF, TaskType.WORKER)


def is_multi_worker(strategy: Any) -> bool:
    """Whether `strategy` keeps replicas in sync across several worker processes.

    A parameter-server strategy is not one: its workers run no program of
    their own.
    """
    if strategy is None or isinstance(
        strategy, tf.distribute.experimental.ParameterServerStrategy
    ):
        return False
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return False
    return strategy.num_replicas_in_sync > len(strategy.extended.worker_devices)


class Agreement:
    """Cross-worker decisions, each one small collective on every worker.

    Every method must be called by every worker at the same point of the
    program: each call is one collective.
    """

    def __init__(self, strategy: tf.distribute.Strategy) -> None:
        self._strategy = strategy

        def gather(values: tf.Tensor) -> tf.Tensor:
            def on_replica(value: tf.Tensor) -> tf.Tensor:
                context = tf.distribute.get_replica_context()
                return context.all_gather(value[tf.newaxis], axis=0)

            gathered = strategy.run(on_replica, args=(values,))
            return strategy.experimental_local_results(gathered)[0]

        self._gather = tf.function(gather, autograph=False, reduce_retracing=True)

    def gather(self, values: list[int]) -> np.ndarray:
        """Every replica's `values`, one row per replica."""
        with explain_cluster_errors(self._strategy):
            return self._gather(tf.constant(values, tf.int64)).numpy()

    def run_plan(self, planned_steps: int, fetches: bool) -> tuple[int, bool]:
        """The next run for all workers: the fewest steps, a fetching run if any."""
        rows = self.gather([planned_steps, int(fetches)])
        return int(rows[:, 0].min()), bool(rows[:, 1].max())

    def any(self, flag: bool) -> bool:
        """True on every worker if `flag` is True on any worker."""
        return bool(self.gather([int(flag)]).max())

    def any_each(self, flags: list[bool]) -> list[bool]:
        """For each of `flags`, whether it is True on any worker (one collective)."""
        return [bool(value) for value in self.gather([int(f) for f in flags]).max(axis=0)]


_agreements: weakref.WeakKeyDictionary[Any, Agreement] = weakref.WeakKeyDictionary()


def agreement(strategy: Any) -> Agreement | None:
    """The strategy's `Agreement`, or None when it spans a single worker."""
    if not is_multi_worker(strategy):
        return None
    found = _agreements.get(strategy)
    if found is None:
        found = _agreements[strategy] = Agreement(strategy)
    return found


class StopTogether(keras.callbacks.Callback):
    """Stops every worker's loop when any worker's loop stops.

    It must be the last callback: Keras checks the stop flag right after
    the callbacks have seen the run.
    """

    def __init__(self, workers: Agreement, preemption: Any = None) -> None:
        super().__init__()
        self._workers = workers
        self._preemption = preemption

    def on_train_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        # With the stop, whether a worker stops on SIGTERM: the others then
        # know they stopped for it (`preemption.Preemption.by_peer`).
        own = self._preemption
        stop, preempted = self._workers.any_each(
            [bool(self.model.stop_training), own is not None and own.requested]
        )
        self.model.stop_training = stop
        if preempted and own is not None and not own.requested:
            own.by_peer = True

    def on_test_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        stop = bool(getattr(self.model, "stop_evaluating", False))
        self.model.stop_evaluating = self._workers.any(stop)


def with_stop_together(model: Any, callbacks: list[Any]) -> list[Any]:
    """`callbacks`, plus `StopTogether` when the model trains on several workers."""
    workers = agreement(getattr(model, "distribute_strategy", None))
    if workers is None:
        return callbacks
    stops_on_sigterm = [c for c in callbacks if isinstance(c, _preemption.StopOnSigterm)]
    own = stops_on_sigterm[0].preemption if stops_on_sigterm else None
    return [*callbacks, StopTogether(workers, own)]


def check_same_step(strategy: Any, step: int, model_dir: str) -> None:
    """Checks that every worker starts from global step `step`.

    Raises:
        RuntimeError: workers restored different checkpoints (model_dir is
            not one directory every task reads).
    """
    workers = agreement(strategy)
    if workers is None:
        return
    steps = sorted({int(s) for s in workers.gather([step])[:, 0]})
    if len(steps) > 1:
        raise RuntimeError(
            f"The workers of the cluster start from different global steps "
            f"{steps} (this one from {step}): they read different checkpoints "
            f"in model_dir {model_dir!r}. Every task must see the chief's "
            "checkpoints: put model_dir on storage all tasks share (a network "
            "file system, GCS, S3)."
        )


def barrier(strategy: Any) -> None:
    """Waits until every worker gets here (no-op on a single worker)."""
    workers = agreement(strategy)
    if workers is not None:
        workers.gather([0])


# ---- what non-chief workers write ---------------------------------------------------


def writes_to_model_dir(config: Any) -> bool:
    """Whether this task writes model_dir: the chief, an evaluator, or a lone process.

    The other workers of a training cluster compute the same steps as the
    chief; what they would write (checkpoints, summaries, exports) the chief
    writes.
    """
    return bool(config.is_chief) or config.task_type == TaskType.EVALUATOR


def private_export_base(config: Any, export_dir_base: Any) -> Any:
    """Where this task exports: `export_dir_base`, or a temporary dir off the chief."""
    if writes_to_model_dir(config):
        return export_dir_base
    private = tempfile.mkdtemp(prefix=f"keras_estimator_{config.task_type}_{config.task_id}_")
    logger.info(
        "Task %s:%s is not the chief: exporting to the private directory %s "
        "instead of %s (the chief exports there).",
        config.task_type,
        config.task_id,
        private,
        os.fsdecode(export_dir_base),
    )
    return private


# ---- errors -------------------------------------------------------------------------

_TASK_PATTERN = re.compile(r"/job:(\w+)/replica:\d+/task:(\d+)")
_CLUSTER_ERRORS = (
    tf.errors.UnavailableError,
    tf.errors.DeadlineExceededError,
    tf.errors.AbortedError,
    tf.errors.CancelledError,
)


def _named_tasks(message: str, cluster: dict[str, list[str]]) -> list[str]:
    names = []
    for job, index in _TASK_PATTERN.findall(message):
        addresses = cluster.get(job, [])
        where = f" ({addresses[int(index)]})" if int(index) < len(addresses) else ""
        name = f"{job}:{index}{where}"
        if name not in names:
            names.append(name)
    return names


def _telling_line(message: str) -> str:
    """The line of a TensorFlow error that says what happened."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    for line in lines:
        if re.search(r"unhealthy|heartbeat|abort|unavailable|connect|socket", line, re.I):
            return line
    return next((line for line in lines if "Graph execution error" not in line), "")


@contextlib.contextmanager
def explain_cluster_errors(strategy: Any) -> Iterator[None]:
    """Re-raises a lost-worker error of a multi-worker run as a RuntimeError."""
    try:
        yield
    except _CLUSTER_ERRORS as error:
        if not is_multi_worker(strategy):
            raise
        resolver = strategy.cluster_resolver
        cluster = resolver.cluster_spec().as_dict()
        message = str(error.message or error)
        tasks = _named_tasks(message, cluster)
        me = f"{resolver.task_type}:{resolver.task_id}"
        lost = [t for t in tasks if not t.startswith(me + " ")] or tasks
        first_line = _telling_line(message)
        raise RuntimeError(
            f"Task {me} lost contact with "
            f"{', '.join(lost) if lost else 'another task'} of the "
            f"MultiWorkerMirroredStrategy cluster {cluster}: {first_line.strip()} "
            "Every task must run until training ends, since each step needs all "
            "of them. Restart every task listed in TF_CONFIG; training resumes "
            "from the latest checkpoint in model_dir."
        ) from error


# ---- input ----------------------------------------------------------------------------


def shard_by_policy(
    dataset: tf.data.Dataset,
    input_fn: Callable[..., Any],
    context: tf.distribute.InputContext,
) -> tf.data.Dataset:
    """Applies the dataset's auto-shard policy when input_fn does not shard itself.

    An input_fn taking `input_context` shards (or not) as it likes. One that
    does not is called on every worker alike: with the policy FILE, DATA or
    HINT set in the dataset's options the dataset is sharded over the
    workers as TensorFlow's `experimental_distribute_dataset` shards it
    (DATA: worker i keeps elements i, i + N, ...); with AUTO (the default)
    or OFF every worker reads all of it, as under tf.estimator.
    """
    if context.num_input_pipelines <= 1:
        return dataset
    names = _fn_args.fn_args(input_fn)
    if "input_context" in names or _fn_args.accepts_kwargs(input_fn):
        return dataset
    policy = dataset.options().experimental_distribute.auto_shard_policy
    policies = tf.data.experimental.AutoShardPolicy
    if policy in (policies.AUTO, policies.OFF):
        if policy == policies.AUTO:
            logger.warning(
                "input_fn takes no input_context, so each of the %d workers reads "
                "the whole dataset. Take `input_context` and shard with it, or "
                "set the dataset's options().experimental_distribute."
                "auto_shard_policy to DATA or FILE.",
                context.num_input_pipelines,
            )
        return dataset
    return distribute.auto_shard_dataset(
        dataset,
        context.num_input_pipelines,
        context.input_pipeline_id,
        context.num_replicas_in_sync,
    )


# ---- making the strategy ----------------------------------------------------------------


def _leader(jobs: dict[str, list[str]]) -> tuple[str, str]:
    job = TaskType.CHIEF if TaskType.CHIEF in jobs else TaskType.WORKER
    return f"/job:{job}/replica:0/task:0", f"{job}:0 ({jobs[job][0]})"


def multi_worker_strategy(
    connect_timeout_secs: float | None = 600,
    heartbeat_timeout_secs: float | None = None,
    communication_options: tf.distribute.experimental.CommunicationOptions | None = None,
) -> tf.distribute.MultiWorkerMirroredStrategy | None:
    """A MultiWorkerMirroredStrategy for the cluster in `TF_CONFIG`, or None.

    `tf.distribute.MultiWorkerMirroredStrategy()` waits for every task of
    the cluster with no useful bound (on TensorFlow 2.21, a worker whose
    chief never answered was still waiting after 10 minutes; a chief whose
    workers never start waits forever).
    This makes the same strategy, but gives up after `connect_timeout_secs`
    with an error naming the task to look at. On the `evaluator` task, which
    is not part of the training cluster (and where the strategy cannot be
    made), it returns None, so one script serves every task:
    `RunConfig(train_distribute=multi_worker_strategy())`.

    Call it before TensorFlow runs anything: the timeouts can only be set
    before TensorFlow's runtime starts.

    Args:
        connect_timeout_secs: how long to wait for every task of the cluster
            to start and connect; None waits as long as TensorFlow does.
        heartbeat_timeout_secs: after how long without news a task is taken
            for dead and training fails on the others; None keeps
            TensorFlow's default (10 s).
        communication_options: passed to the strategy (e.g. a
            `timeout_seconds` for each collective).

    Returns:
        The strategy; None on an evaluator task.

    Raises:
        ValueError: TF_CONFIG is malformed, or describes a cluster with
            parameter servers (use ParameterServerStrategy there).
        RuntimeError: the cluster did not come together within
            `connect_timeout_secs`.

    Example:
        >>> config = keras_estimator.RunConfig(
        ...     train_distribute=multi_worker_strategy(connect_timeout_secs=300))  # doctest: +SKIP
    """
    # Addresses are checked before TensorFlow tries to reach them.
    info = _parse_tf_config(os.environ.get("TF_CONFIG"), check_addresses=True)
    if info.task_type == TaskType.EVALUATOR:
        logger.info("Task evaluator:%d evaluates without a training strategy.", info.task_id)
        return None
    jobs = info.cluster_spec.as_dict()
    if TaskType.PS in jobs:
        raise ValueError(
            f"TF_CONFIG describes a cluster with parameter servers ({jobs}); "
            "MultiWorkerMirroredStrategy trains with chief and worker tasks only. "
            "Use tf.distribute.experimental.ParameterServerStrategy, or remove "
            'the "ps" job.'
        )
    options = {"communication_options": communication_options} if communication_options else {}
    if not jobs or info.task_type not in _TRAINING_JOBS:
        return tf.distribute.MultiWorkerMirroredStrategy(**options)
    leader, leader_name = _leader(jobs)
    counts = {job: len(jobs[job]) for job in _TRAINING_JOBS if job in jobs}
    if not distribute.configure_cluster_connection(
        leader, counts, connect_timeout_secs, heartbeat_timeout_secs
    ):
        logger.warning(
            "TensorFlow's runtime already started, so the connection timeouts "
            "cannot be set: call multi_worker_strategy() before anything else "
            "runs TensorFlow operations."
        )
    me = f"{info.task_type}:{info.task_id}"
    try:
        return tf.distribute.MultiWorkerMirroredStrategy(**options)
    except (tf.errors.DeadlineExceededError, tf.errors.UnavailableError) as error:
        first_line = str(error.message or error).splitlines()[0]
        raise RuntimeError(
            f"Task {me} could not bring up the training cluster within "
            f"{connect_timeout_secs} s: {first_line} The cluster is led by "
            f"{leader_name}; every task in TF_CONFIG's cluster "
            f"{json.dumps(jobs)} must start and reach it on its address. Start "
            "the missing tasks, check the addresses and ports, or raise "
            "connect_timeout_secs."
        ) from error
