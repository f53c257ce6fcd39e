"""Parameter-server training: `Estimator.train` under TF2's ParameterServerStrategy.

With `RunConfig(train_distribute=tf.distribute.experimental.ParameterServerStrategy(
resolver))` the chief is the *coordinator* of a cluster of `ps` and `worker`
tasks: the variables live on the parameter servers, and the chief's Python
program sends training steps, as compiled functions, to the workers through a
`tf.distribute.coordinator.ClusterCoordinator`. Workers and parameter servers
run no user code; they only serve (`serve`).

One program runs on every task (TF_CONFIG says which). Only the chief may
create the strategy, since creating it connects the process to the cluster
as its chief; on a ps task, or a worker of a cluster with ps tasks,
`Estimator.train` serves instead of training and never returns:

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    strategy = (tf.distribute.experimental.ParameterServerStrategy(resolver)
                if resolver.task_type == "chief" else None)
    estimator = Estimator(model_fn, model_dir, RunConfig(train_distribute=strategy))
    estimator.train(input_fn, steps=1000)     # ps and worker tasks serve here

Why a driver of its own, beside `loop` (Keras `fit`): Keras 3's `fit` has no
ClusterCoordinator path, so it cannot host this strategy. The driver here is
small and keeps everything else of `Estimator.train` the same: the model_fn's
train step (`ModelFnModel.train_step`), the variable store, and the callback
list `Estimator.train` builds (the stop-at-step, one `HookCallback` with every
hook, the Keras callbacks), called through `loop.CallbackDriver` in Keras'
order: `on_train_begin`, `on_epoch_begin`, then per run
`on_train_batch_begin` / `on_train_batch_end` (logs hold `loss` and
`global_step`), `on_epoch_end`, `on_train_end`. So
hooks, checkpoints, summaries, logging and stopping behave as in local
training.

A run is what the hooks allow (`loop.plan_steps`), as in local training: N
steps are split into one chunk per worker, each chunk a fused loop of steps in
one scheduled function (a schedule costs several RPCs, so chunks amortise it),
and the coordinator joins before the hooks see the run. A run whose hooks
fetch tensors is one step on one worker. With one replica per worker, every
chunk and fetching step runs the model's one trace of the training step,
made on the chief (which called the model_fn once, creating the variables
on the parameter servers), as tf.estimator's chief called it once per
`train()`. Workers run their chunks
concurrently; the global step (a variable on a parameter server) counts the
steps of all workers, and after every run it has advanced by exactly the
steps run (see `_Runner._finish` for train_ops that do not advance it).
Each worker reads its own copy of input_fn's dataset (input_fn gets an
`InputContext` with one input pipeline, as TensorFlow's parameter-server input
has it): shuffle or shard it in input_fn. Training stops when any worker's
input ends.

SIGTERM on the chief (`preemption`) acts at the same boundary: the
callback list holds `StopOnSigterm`, so `_drive` plans no further run once
the run under way has joined, hooks' `end` runs (the CheckpointSaverHook
saves the step reached) and `Estimator.train` returns. A run waiting for a
lost worker to come back (no worker left) would never reach that boundary,
so the chief waits for a run in a way SIGTERM interrupts: the run is given
up, the global step is read back from the parameter servers (it counts every
step a worker applied), and training ends there as at a boundary. Workers and
ps tasks keep the default handler: they only serve.

Evaluation and prediction are not scheduled: they run on the chief, reading
the variables from the parameter servers. Checkpoints and summaries are
written by the chief.

Failures (ClusterCoordinator's own policy): a worker that dies has its
scheduled functions run again on the other workers, so training goes on (the
steps it had begun of a chunk are run twice, so the global step may pass the
target by up to one run); when no worker is left, the coordinator waits for
one to come back. A parameter server that dies makes the run fail with
`tf.errors.UnavailableError`, re-raised here with what to do: restart the
cluster and train again, which resumes from the last checkpoint.

The TF1 `tf.compat.v1.distribute.experimental.ParameterServerStrategy` cannot
run: TensorFlow raises NotImplementedError for its `scope()` and `run()`
outside graph mode; RunConfig rejects it with a pointer to the TF2 strategy.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import keras
import tensorflow as tf

from keras_estimator._src.base.tf_config import TaskType
from keras_estimator._src.distribute import preemption as _preemption
from keras_estimator._src.engine import fetches as _fetches
from keras_estimator._src.engine import fused_loop
from keras_estimator._src.engine import loop as _loop
from keras_estimator._src.engine.fused_loop import (
    GLOBAL_STEP_KEY,
    LOSS_KEY,
    NAN_STEP_KEY,
)
from keras_estimator._src.engine.run_plan import RunState
from keras_estimator._src.engine.step_functions import (
    FETCHES_KEY,
    fetch_plan_key,
    fetching_step,
)
from keras_estimator._src.engine.summaries import summary_dirs
from keras_estimator._src.engine.variable_store import VariableStore

logger = logging.getLogger("keras_estimator")

_SERVING_TASKS = (TaskType.PS, TaskType.WORKER)


def is_parameter_server_strategy(strategy: Any) -> bool:
    """Whether `strategy` is TF2's `tf.distribute.experimental.ParameterServerStrategy`."""
    return isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy)


# ---- the tasks that serve --------------------------------------------------------


def serves_instead_of_training(config: Any) -> bool:
    """Whether this task only serves: a ps, or a worker of a cluster with ps tasks.

    In TF2 parameter-server training only the chief runs the program's
    training; `Estimator.train` (and `train_and_evaluate`) on these tasks
    call `serve` instead.

    Args:
        config: the task's `RunConfig` (its cluster comes from `TF_CONFIG`).
    """
    jobs = config.cluster_spec.jobs if config.cluster_spec else []
    return TaskType.PS in jobs and config.task_type in _SERVING_TASKS


def serve(config: Any) -> NoReturn:
    """Runs this task's TensorFlow server for the chief, and never returns.

    A parameter server holds variables; a worker runs the steps the chief
    schedules on it. Both only answer the chief, so the task blocks here
    until its process is stopped (as tf.estimator's ps tasks did); stop it
    when the chief is done.

    Args:
        config: the task's `RunConfig`; its `cluster_spec`, `task_type`,
            `task_id` and `protocol` (default "grpc") come from `TF_CONFIG`.

    Raises:
        ValueError: the task is not a ps or a worker of a cluster with ps tasks.
    """
    if not serves_instead_of_training(config):
        raise ValueError(
            f"Only ps tasks, and worker tasks of a cluster with ps tasks, serve; "
            f"this task is {config.task_type!r} {config.task_id} in the cluster "
            f"{config.cluster_spec.as_dict()}. Check TF_CONFIG."
        )
    # TensorFlow's parameter-server set-up: RPCs from this task fail at once
    # (instead of waiting for a lost peer) so the chief sees failures quickly.
    os.environ.setdefault("GRPC_FAIL_FAST", "use_caller")
    server = tf.distribute.Server(
        config.cluster_spec,
        job_name=config.task_type,
        task_index=config.task_id,
        protocol=config.protocol or "grpc",
        start=True,
    )
    logger.info(
        "Serving as %s %d for the chief's parameter-server training at %s.",
        config.task_type,
        config.task_id,
        server.target,
    )
    server.join()
    raise RuntimeError("The TensorFlow server stopped.")  # join() never returns


# ---- input ----------------------------------------------------------------------


def per_worker_input(
    strategy: tf.distribute.Strategy,
    make_dataset: Callable[[tf.distribute.InputContext], tf.data.Dataset],
) -> tuple[Any, Any]:
    """A dataset made on every worker, and the spec of one element.

    Args:
        strategy: the ParameterServerStrategy.
        make_dataset: calls input_fn with an `InputContext`.

    Returns:
        The per-worker dataset (iterate it on the chief, use its iterator in
        scheduled functions) and its element spec.
    """
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)

    def dataset_fn() -> Any:
        return strategy.distribute_datasets_from_function(make_dataset)

    # create_per_worker_dataset traces dataset_fn here once (that is the one
    # call of input_fn) and runs the trace on each worker.
    dataset = coordinator.create_per_worker_dataset(dataset_fn)
    return dataset, dataset.element_spec


# ---- the driver ----------------------------------------------------------------


class _Steps:
    """The compiled step functions of one model, traced once and reused.

    Args:
        model: the `ModelFnModel`, already built in TRAIN mode.
        store: its variable store.
        strategy: the ParameterServerStrategy.
    """

    def __init__(self, model: Any, store: VariableStore, strategy: Any) -> None:
        # A proxy: `_steps_of` holds this object for as long as the model lives.
        self._model = weakref.proxy(model)
        self._store = store
        self._strategy = strategy
        self._logs_specs: dict[str, Any] = {}
        self._fetching: dict[tuple[Any, ...], Any] = {}
        self._current_spec: Any = None
        self._element_spec: Any = None
        # The model's one trace of the training step for the current input
        # (`shares`), which the chunks and the fetching steps run.
        self._shared: Any = None
        # Up to `num_steps` steps on one worker: (steps run, last step's logs
        # with this worker's first NaN step). Fewer run only when this
        # worker's input ends; no batch is lost between chunks.
        self.chunk = fused_loop.fused_steps(self._chunk_step, lambda: self._current_spec)

    def _shares(self) -> bool:
        """Whether the workers run the model's one trace of the step.

        So with one replica per worker: the chief traced the step (outside
        the strategy, creating the variables on the parameter servers) as
        each worker's replica runs it, and the model_fn is called once per
        train(), as tf.estimator 2.15 called it once per task. With several
        replicas a worker splits its batch, and its steps trace their own.
        """
        return bool(self._strategy.num_replicas_in_sync == 1)

    def _chunk_step(self, element: Any) -> dict[str, tf.Tensor]:
        shared = self._shared
        fused = None if shared is None else shared.fused_step()
        if fused is None:
            return self.one_step(element)
        return fused(element)

    def one_step(self, element: Any) -> dict[str, tf.Tensor]:
        """One training step on this worker's replicas; their logs merged."""
        strategy = self._strategy
        # The store must hand out its variables in the replica functions and
        # in the optimizer's cross-replica updates alike.
        with self._store.scope(allow_creation=False):
            outputs = strategy.run(self._model.train_step, args=(element,))
        return tf.nest.map_structure(lambda v: _merge_replicas(strategy, v), outputs)

    def logs_spec(self, element_spec: Any) -> Any:
        """The structure of one step's logs (traced, not run, on the chief)."""
        key = repr(element_spec)
        if key not in self._logs_specs:

            def step(element: Any) -> Any:
                with self._store.scope(allow_creation=False):
                    return self._model.train_step(element)

            traced = tf.function(step, autograph=False).get_concrete_function(
                element_spec
            )
            self._logs_specs[key] = tf.nest.map_structure(
                lambda t: tf.TensorSpec(t.shape, t.dtype), traced.structured_outputs
            )
        return self._logs_specs[key]

    def prepare(self, element_spec: Any) -> None:
        """Sets the step and the logs structure `chunk` is traced with."""
        self._element_spec = element_spec
        self._shared = (
            self._model.shared_train_step(element_spec) if self._shares() else None
        )
        if self._shared is None:
            self._current_spec = self.logs_spec(element_spec)
        else:
            self._current_spec = tf.nest.map_structure(
                lambda t: tf.TensorSpec(t.shape, t.dtype), self._shared.logs_structure
            )

    def fetching(self, plan: _fetches.FetchPlan) -> Any:
        """A step that also returns what the hooks' `plan` fetches (`fetching_step`)."""
        key = (*fetch_plan_key(plan), repr(self._element_spec))
        function = self._fetching.get(key)
        if function is None:
            shared_step = None
            if self._shared is not None:
                directories = summary_dirs(plan.keys)
                shared = self._model.shared_train_step(self._element_spec)
                if shared is not None:
                    shared_step = self._model.shared_fetching_step(
                        shared, plan, bool(directories)
                    )
            step = fetching_step(self._model.trace, self.one_step, plan, shared_step)
            function = tf.function(step, autograph=False)
            self._fetching[key] = function
        return function


# Step functions per model, so that every train() call reuses their traces.
_steps_of: weakref.WeakKeyDictionary[Any, _Steps] = weakref.WeakKeyDictionary()


def run_training(
    model: Any,
    store: VariableStore,
    strategy: Any,
    dataset: Any,
    state: RunState,
    callbacks: list[Any],
) -> None:
    """Trains on the cluster's workers until a callback stops it or input ends.

    Args:
        model: the `ModelFnModel`, built in TRAIN mode.
        store: the model's variable store (variables on the parameter servers).
        strategy: the ParameterServerStrategy.
        dataset: from `per_worker_input`.
        state: the call's run state (the model's during the call), updated
            after every run.
        callbacks: the loop's callbacks, called in list order as by `fit`.

    Raises:
        tf.errors.UnavailableError: a parameter server is gone.
    """
    if _loop.plan_steps(callbacks, state.value) <= 0:
        return
    steps = _steps_of.get(model)
    if steps is None or steps._strategy is not strategy:
        steps = _Steps(model, store, strategy)
        _steps_of[model] = steps
    steps.prepare(dataset.element_spec)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    with _explained_failures(), model.running(state):
        runner = _Runner(
            coordinator,
            steps,
            iter(dataset),
            store,
            _num_workers(),
            _sigterm_check(callbacks),
        )
        _drive(model, runner, state, callbacks)


def _sigterm_check(callbacks: list[Any]) -> Callable[[], bool] | None:
    """Whether SIGTERM arrived, from the loop's `StopOnSigterm`, if it has one."""
    for callback in callbacks:
        if isinstance(callback, _preemption.StopOnSigterm):
            return callback.requested
    return None


def _drive(model: Any, runner: _Runner, state: RunState, callbacks: list[Any]) -> None:
    """The loop: Keras `fit`'s callback calls around each scheduled run."""
    driver = _loop.CallbackDriver(keras.callbacks.CallbackList(callbacks, model=model), "train")
    model.stop_training = False
    logs: dict[str, Any] = {}
    driver.begin()
    while not model.stop_training:
        planned = _loop.plan_steps(callbacks, state.value)
        if planned <= 0:
            break
        driver.batch_begin()
        planned, steps_run, run_logs = runner.run(planned, state.fetches)
        state.last_run_steps = steps_run
        state.nan_loss_step = run_logs.pop(NAN_STEP_KEY, None)
        if runner.abandoned:
            # No run ended: callbacks see no batch end. Steps workers applied
            # before they were lost count, so the checkpoint saved on the way
            # out names the step the variables hold.
            state.value = runner.global_step_now()
            break
        if steps_run:
            logs = run_logs
            state.value = int(logs[GLOBAL_STEP_KEY])
            state.last_loss = float(logs[LOSS_KEY])
        driver.batch_end(logs)
        if steps_run < planned:
            break  # a worker's input ended
    driver.end(logs)


class _Runner:
    """Schedules the runs of one `run_training` call and collects their logs."""

    def __init__(
        self,
        coordinator: Any,
        steps: _Steps,
        iterator: Any,
        store: VariableStore,
        num_workers: int,
        sigterm: Callable[[], bool] | None = None,
    ) -> None:
        self._coordinator = coordinator
        self._steps = steps
        self._iterator = iterator
        self._store = store
        self._num_workers = num_workers
        self._sigterm = sigterm
        self._global_step = int(store.global_step().numpy())
        # A run given up on SIGTERM while the coordinator waited for workers.
        self.abandoned = False

    def global_step_now(self) -> int:
        """The global step the parameter servers hold now."""
        self._global_step = int(self._store.global_step().numpy())
        return self._global_step

    def _join(self) -> bool:
        """Waits for the scheduled functions; False if SIGTERM came first.

        `ClusterCoordinator.join` blocks until a lost worker comes back,
        which may be never; it runs in a thread of its own here, so that the
        main thread, where the SIGTERM handler runs, can give the run up.
        Errors of the scheduled functions are raised here as join raises them.
        """
        if self._sigterm is None:
            self._coordinator.join()
            return True
        finished = threading.Event()
        errors: list[BaseException] = []

        def wait() -> None:
            try:
                self._coordinator.join()
            except BaseException as error:  # noqa: BLE001 - re-raised below
                errors.append(error)
            finally:
                finished.set()

        threading.Thread(target=wait, name="ps-join", daemon=True).start()
        while not finished.wait(0.1):
            if self._sigterm():
                logger.warning(
                    "SIGTERM while the run under way waits for workers of the "
                    "parameter-server cluster: the run is given up, and training "
                    "stops at the global step the parameter servers hold."
                )
                self.abandoned = True
                return False
        if errors:
            raise errors[0]
        return True

    def run(self, planned: int, fetches: Any) -> tuple[int, int, dict[str, Any]]:
        """One run: (steps planned, steps run, logs).

        A run whose hooks fetch tensors (`fetches.request`) is one step;
        other runs are `planned` steps over all workers.
        """
        request = fetches.request
        if request is not None and request.keys:
            return (1, *self.fetching_step(request, fetches))
        return (planned, *self.chunks(planned))

    def chunks(self, planned: int) -> tuple[int, dict[str, Any]]:
        """Runs `planned` steps split over the workers; (steps run, logs).

        The logs are those of the chunk that ran the latest step, with the
        global step as the parameter server holds it after every chunk.
        """
        sizes = split_steps(planned, self._num_workers)
        remote = [
            self._coordinator.schedule(
                self._steps.chunk, args=(self._iterator, tf.constant(size))
            )
            for size in sizes
        ]
        if not self._join():
            return 0, {}
        results = [value.fetch() for value in remote]
        ran = [(int(count), dict(logs)) for count, logs in results if int(count) > 0]
        nan_steps = [int(logs.pop(NAN_STEP_KEY)) for _, logs in ran]
        if not ran:
            return 0, {}
        _, logs = max(ran, key=lambda item: int(item[1][GLOBAL_STEP_KEY]))
        steps_run = sum(count for count, _ in ran)
        logs = self._finish(logs, steps_run)
        nan_steps = [step for step in nan_steps if step >= 0]
        if nan_steps:
            logs[NAN_STEP_KEY] = min(nan_steps)
        return steps_run, logs

    def fetching_step(
        self, request: _fetches.FetchPlan, fetches: Any
    ) -> tuple[int, dict[str, Any]]:
        """Runs one step that returns the hooks' fetches; (steps run, logs)."""
        function = self._steps.fetching(request)
        remote = self._coordinator.schedule(function, args=(self._iterator,))
        try:
            if not self._join():
                return 0, {}
        except tf.errors.OutOfRangeError:
            return 0, {}
        logs = dict(remote.fetch())
        fetches.results = _fetches.to_numpy(logs.pop(FETCHES_KEY))
        return 1, self._finish(logs, 1)

    def _finish(self, logs: dict[str, Any], steps_run: int) -> dict[str, Any]:
        """The run's logs with the global step after it, advanced once per step.

        A train_op that leaves the global step alone (a Keras optimizer's)
        has the step advance it when it sees no change; with workers running
        concurrently another worker's change can hide that, so the steps a
        run missed are added here, once every chunk is done.
        """
        variable = self._store.global_step()
        value = int(variable.numpy())
        missed = self._global_step + steps_run - value
        if missed > 0:
            value = int(variable.assign_add(missed).numpy())
        self._global_step = value
        logs = dict(logs)
        logs[GLOBAL_STEP_KEY] = value
        return logs


def split_steps(planned: int, num_workers: int) -> list[int]:
    """`planned` steps as one chunk per worker, as even as possible.

    Example:
        >>> split_steps(7, 3)
        [3, 2, 2]
    """
    count = max(min(planned, num_workers), 1)
    base, extra = divmod(planned, count)
    return [base + (1 if i < extra else 0) for i in range(count)]


def _num_workers() -> int:
    """The worker tasks this chief is connected to (their devices are listed here)."""
    tasks = set()
    for device in tf.config.list_logical_devices():
        spec = tf.DeviceSpec.from_string(device.name)
        if spec.job == TaskType.WORKER:
            tasks.add(spec.task)
    return max(len(tasks), 1)


def _merge_replicas(strategy: Any, value: Any) -> Any:
    """One value from a worker's replicas: the mean of floats, else the first's."""
    local = strategy.experimental_local_results(value)
    if len(local) == 1 or not local[0].dtype.is_floating:
        return local[0]
    return tf.add_n(list(local)) / len(local)


@contextlib.contextmanager
def _explained_failures() -> Iterator[None]:
    """Re-raises the loss of a parameter server with what it means and what to do."""
    try:
        yield
    except tf.errors.UnavailableError as error:
        tasks = sorted(set(re.findall(r"/job:ps/replica:\d+/task:\d+", error.message)))
        lost = f"parameter server {', '.join(tasks)}" if tasks else "a cluster task"
        raise tf.errors.UnavailableError(
            None,
            None,
            f"Parameter-server training lost {lost}, which it cannot do "
            "without: the variables held there are gone. Restart the cluster "
            "and call train() again; it resumes from the last checkpoint in "
            f"model_dir. TensorFlow reported: {error.message}",
        ) from error
