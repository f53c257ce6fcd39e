"""The one place that touches private Keras and TensorFlow state.

Checked on TensorFlow 2.21 and Keras 3.15.

TF1's `variable_scope` likewise keeps its `default_name` counters (which
give `dense`, `dense_1` to `tf.compat.v1.layers`-style code) in a graph
collection that TF2 traces share; `fresh_variable_scopes` gives each trace
its own, as each TF1 graph had.

Checked on Keras 3.15. Keras names layers from a process-wide counter
(`dense`, `dense_1`, ...). A model_fn is traced once per mode and again on
every retrace, and TF1-style checkpoints are keyed by variable name, so each
trace must see the counter start from zero, as each new TF1 graph did.
Keras exposes no public way to scope that counter; this module swaps it.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import threading
from collections.abc import Callable, Iterator
from typing import Any

from keras.src.backend.common import global_state
from keras.src.backend.common.name_scope import current_path

_NAME_COUNTER_KEY = "object_name_uids"


@contextlib.contextmanager
def fresh_layer_names() -> Iterator[None]:
    """Makes Keras auto-name objects as in a new program, then restores state."""
    saved = global_state.get_global_attribute(_NAME_COUNTER_KEY)
    global_state.set_global_attribute(
        _NAME_COUNTER_KEY, collections.defaultdict(int)
    )
    try:
        yield
    finally:
        global_state.set_global_attribute(_NAME_COUNTER_KEY, saved)


def keras_scope_path() -> str:
    """The Keras name-scope path (`"dense_1"`) active now, or ''.

    Keras 3 names a layer's variables by this path, not by TensorFlow's name
    scopes (which add `_1` suffixes of their own inside a graph).
    """
    return current_path()


# Graph-collection keys where tf.compat.v1.variable_scope keeps its scope
# counters and get_variable its name -> variable table.
_VARIABLE_SCOPE_KEYS = (("__varscope",), ("__variable_store",))


@contextlib.contextmanager
def fresh_variable_scopes() -> Iterator[None]:
    """Makes `variable_scope(default_name=...)` count from zero, then restores."""
    import tensorflow as tf

    saved = {}
    for key in _VARIABLE_SCOPE_KEYS:
        stores = tf.compat.v1.get_collection_ref(key)
        saved[key] = list(stores)
        del stores[:]
    try:
        yield
    finally:
        for key, content in saved.items():
            tf.compat.v1.get_collection_ref(key)[:] = content


# Collections a TF2 function graph shares *by reference* with the graph it
# is traced from (`func_graph.ALLOWLIST_COLLECTIONS`): the variable lists and
# get_variable's stores. Other collections are copied.
_SHARED_COLLECTION_KEYS = (
    "variables",  # GraphKeys.GLOBAL_VARIABLES
    "local_variables",  # GraphKeys.LOCAL_VARIABLES
    "trainable_variables",  # GraphKeys.TRAINABLE_VARIABLES
    *_VARIABLE_SCOPE_KEYS,
)


def own_variable_collections(graph: Any) -> None:
    """Gives a function graph variable collections of its own, once.

    Checked on TensorFlow 2.21. A `tf.function` traced from eager code gets
    the *same list objects* as TensorFlow's global default graph for the
    variable collections (`FuncGraph.__init__` takes them with
    `get_collection_ref`), so whatever a trace adds to `TRAINABLE_VARIABLES`
    stays in the global graph for the life of the process: every later
    trace, of any Estimator, sees it, and it keeps the variables alive.
    `Graph.clear_collection` deletes the graph's entry (it does not empty the
    list), which unlinks the trace's collection from the outer graph's; the
    trace's next `get_collection_ref` starts a list of its own. Graphs nested
    in a trace (`while_loop` bodies) share the trace's collections dict, so
    unlinking from there unlinks the trace, which is what is wanted.

    Args:
        graph: the graph being traced. Nothing changes for a graph that is
            not a function graph, or whose collections are already its own.
    """
    root = graph
    while getattr(root, "outer_graph", None) is not None:
        root = root.outer_graph
    if root is graph:
        return
    own, shared = graph._collections, root._collections
    for key in _SHARED_COLLECTION_KEYS:
        if key in own and own[key] is shared.get(key):
            graph.clear_collection(key)


def call_traced(concrete: Any, *args: Any, single_threaded: bool = False) -> Any:
    """Calls a traced (concrete) function on `args` without re-binding them.

    Checked on TensorFlow 2.21. `ConcreteFunction.__call__` matches its
    arguments against the traced signature and casts each captured variable on
    every call, about 0.3 ms: as much as a small training step. The private
    `_call_flat` takes the flattened inputs directly; the public call remains
    the fallback should it go away.

    With `single_threaded`, the call runs on TensorFlow's single-threaded
    executor, which runs every kernel in the calling thread instead of
    handing ready ops to the inter-op thread pool (see `_step_call` for when
    that is allowed). The executor of the functions a thread calls is the
    eager context's thread-local `function_call_options.executor_type`,
    which has no public setter.
    """
    import tensorflow as tf

    call_flat = getattr(concrete, "_call_flat", None)
    if call_flat is None:
        return concrete(*args)
    flat = tf.nest.flatten(args, expand_composites=True)
    if not single_threaded:
        return call_flat(flat, concrete.captured_inputs)
    from tensorflow.python.eager import context

    eager = context.context()
    saved = eager.function_call_options
    eager.function_call_options = _single_threaded_options(saved)
    try:
        return call_flat(flat, concrete.captured_inputs)
    finally:
        eager.function_call_options = saved


_SINGLE_THREADED_EXECUTOR = "SINGLE_THREADED_EXECUTOR"
_single_threaded_cache: list[Any] = [None, None]


def _single_threaded_options(options: Any) -> Any:
    """`options` (a FunctionCallOptions) with the single-threaded executor."""
    if _single_threaded_cache[0] is not options:
        single = copy.copy(options)
        single.executor_type = _SINGLE_THREADED_EXECUTOR
        _single_threaded_cache[:] = [options, single]
    return _single_threaded_cache[1]


def write_summary_proto(writer: Any, serialized: bytes, step: int) -> None:
    """Writes one serialized `Summary` proto at `step` through `writer`.

    Checked on TensorFlow 2.21. `tf.summary.experimental.write_raw_pb` does
    the same through the default-writer and `record_if` machinery, which
    costs ten times the op itself when called eagerly; the op needs the
    writer's resource, which has no public accessor.
    """
    import tensorflow as tf

    tf.raw_ops.WriteRawProtoSummary(
        writer=writer._resource, step=tf.constant(step, tf.int64), tensor=serialized
    )


def close_summary_writer(writer: Any) -> None:
    """Flushes and closes the event file of a `tf.summary` file writer.

    Checked on TensorFlow 2.21. `SummaryWriter.close()` marks the Python
    object closed for good; the raw op deletes the writer resource (closing
    its file) and leaves the handle, which traced functions captured, valid
    for `reopen_summary_writer`. The handle has no public accessor.
    """
    import tensorflow as tf

    with tf.init_scope(), tf.device("cpu:0"):
        tf.raw_ops.FlushSummaryWriter(writer=writer._resource)
        tf.raw_ops.CloseSummaryWriter(writer=writer._resource)


def reopen_summary_writer(writer: Any, logdir: str) -> None:
    """Re-creates a closed writer's resource under its handle, in a new event file.

    Functions that captured the handle write to the new file without a
    retrace. The arguments are `tf.summary.create_file_writer`'s defaults.
    """
    import tensorflow as tf

    with tf.init_scope(), tf.device("cpu:0"):
        tf.raw_ops.CreateSummaryFileWriter(
            writer=writer._resource,
            logdir=logdir,
            max_queue=10,
            flush_millis=120_000,
            filename_suffix=".v2",
        )


# ---- SavedModel files ---------------------------------------------------------
# Checked on TensorFlow 2.21. TensorFlow has no public API to write a
# SavedModel proto in text format or to (re)write its fingerprint file; the
# export uses the proto class and the function `tf.saved_model.save` calls.


def rewrite_saved_model_as_text(export_dir: str) -> None:
    """Replaces `saved_model.pb` by the same proto as `saved_model.pbtxt`.

    The fingerprint (which hashes the binary file) is removed with it, as
    TensorFlow's own text-format writer writes none.
    """
    import os

    import tensorflow as tf
    from google.protobuf import text_format
    from tensorflow.core.protobuf import saved_model_pb2

    binary = os.path.join(export_dir, tf.saved_model.SAVED_MODEL_FILENAME_PB)
    proto = saved_model_pb2.SavedModel()
    with tf.io.gfile.GFile(binary, "rb") as handle:
        proto.ParseFromString(handle.read())
    text = os.path.join(export_dir, tf.saved_model.SAVED_MODEL_FILENAME_PBTXT)
    with tf.io.gfile.GFile(text, "w") as handle:
        handle.write(text_format.MessageToString(proto))
    tf.io.gfile.remove(binary)
    fingerprint = os.path.join(export_dir, "fingerprint.pb")
    if tf.io.gfile.exists(fingerprint):
        tf.io.gfile.remove(fingerprint)


def refresh_saved_model_fingerprint(export_dir: str) -> None:
    """Rewrites `fingerprint.pb` to match the current `saved_model.pb`."""
    from tensorflow.python.saved_model import fingerprinting_utils

    fingerprinting_utils.write_fingerprint(export_dir)


def add_control_input(operation: Any, dependency: Any) -> None:
    """Makes `operation` run after `dependency`, in a graph already built.

    Checked on TensorFlow 2.21: `Operation._add_control_input` is what
    TensorFlow's own automatic control dependencies use to order ops on one
    resource after tracing; no public API adds an edge to an existing op.
    """
    operation._add_control_input(dependency)


def build_keras_training_state(model: Any, data_spec: Any) -> None:
    """Creates a compiled Keras model's loss, metric and optimizer variables.

    Checked on Keras 3.15. Keras builds this state lazily, inside the first
    traced train step, through the private `Trainer._symbolic_build`, which
    only needs shapes and dtypes (a `(x, y)` structure of `tf.TensorSpec`s
    serves). The Estimator needs the variables before any trace, so it calls
    the same method up front.
    """
    model._symbolic_build(data_batch=data_spec)


def estimator_loss_scaling(strategy: Any) -> Any:
    """Makes v1 optimizers average gradients over replicas, as under tf.estimator.

    Checked on TensorFlow 2.21. A v1 optimizer divides the loss by the
    replica count only while the strategy's private
    `_scale_loss_for_estimator_enabled()` context is active, which
    tf.estimator entered around each model_fn call; without it, gradients
    of mean losses are summed over replicas.
    """
    enable = getattr(strategy, "_scale_loss_for_estimator_enabled", None)
    return enable() if enable is not None else contextlib.nullcontext()


def skip_symbolic_build(model: Any, iterator: Any = None, data_batch: Any = None) -> None:
    """Stands in for Keras' `_maybe_symbolic_build` on models built beforehand.

    Checked on Keras 3.15. At the start of `fit` and `evaluate`, Keras' TF
    trainer calls the private `_maybe_symbolic_build(iterator=epoch_iterator)`,
    which under a strategy draws one batch from a fresh iterator and reduces
    it over the replicas to build missing state. Under
    MultiWorkerMirroredStrategy that reduce fails on dict features
    (keras-team/keras#20585) and is a cross-worker collective besides. A
    model whose state already exists (`ModelFnModel` builds each mode
    itself) has nothing to build, so it binds this under that name; the
    epoch iterator is handed to `model.keep_epoch_iterator`, so that the
    loop can free its input when the call returns (`end_epoch_iteration`).
    """
    del data_batch
    if iterator is not None:
        model.keep_epoch_iterator(iterator)


def end_epoch_iteration(epoch_iterator: Any) -> None:
    """Drops what Keras' epoch iterator holds of the input, breaking its cycle.

    Checked on Keras 3.15. The epoch iterator keeps the generator that yields
    its tf.data iterator, and the generator's frame keeps the epoch iterator:
    the tf.data iterator lives until a garbage collection finds the cycle
    (a full one costs about 0.1 s here). `EpochIterator.reset()` drops the
    generator, which frees the tf.data iterator unless another reference
    holds it.
    """
    epoch_iterator.reset()


# ---- multi-worker clusters -----------------------------------------------------
# Checked on TensorFlow 2.21.


def configure_cluster_connection(
    leader: str,
    jobs: dict[str, int],
    connect_timeout_secs: float | None,
    heartbeat_timeout_secs: float | None,
) -> bool:
    """Bounds how long this task waits for the cluster when a strategy starts.

    `MultiWorkerMirroredStrategy()` starts TensorFlow's coordination service
    (led by `leader`) and blocks until every task has registered; unless
    configured first, a worker whose chief never answers waits for a very
    long time (still waiting after 10 minutes when checked), and a chief
    whose workers never come waits forever. TensorFlow has
    no public API for these timeouts: the strategy configures the service
    through the eager context, and leaves an existing configuration alone,
    so this sets the same configuration with timeouts, before the strategy
    is made. `cluster_register_with_barrier` makes the leader time out too.

    Args:
        leader: the coordination leader, e.g. "/job:chief/replica:0/task:0".
        jobs: job name -> number of tasks, for the jobs that train.
        connect_timeout_secs: how long to wait for every task to register.
        heartbeat_timeout_secs: after how long without heartbeats a task is
            declared dead (None: TensorFlow's default, 10 s on 2.21).

    Returns:
        False if the eager context already runs (too late to configure).
    """
    from tensorflow.compiler.xla.tsl.protobuf import coordination_config_pb2
    from tensorflow.python.eager import context

    ctx = context.context()
    if ctx._context_handle is not None or ctx.coordination_service is not None:
        return False
    ctx.configure_coordination_service(
        service_type="standalone",
        service_leader=leader,
        cluster_register_timeout_in_ms=int((connect_timeout_secs or 0) * 1000),
        heartbeat_timeout_in_ms=int((heartbeat_timeout_secs or 0) * 1000),
        coordinated_jobs=[
            coordination_config_pb2.CoordinatedJob(name=name, num_tasks=count)
            for name, count in jobs.items()
        ],
    )
    service_config: Any = ctx.coordination_service
    service_config.cluster_register_with_barrier = bool(connect_timeout_secs)
    return True


def auto_shard_dataset(
    dataset: Any, num_shards: int, index: int, num_replicas_in_sync: int
) -> Any:
    """Shards `dataset` by its auto-shard policy, as TensorFlow would.

    `strategy.experimental_distribute_dataset` applies the dataset's
    `experimental_distribute.auto_shard_policy` (FILE, DATA, HINT) through
    this private function; `distribute_datasets_from_function`, which the
    Estimator uses so that each element is one replica's batch, applies none.
    """
    from tensorflow.python.distribute import input_ops

    return input_ops.auto_shard_dataset(dataset, num_shards, index, num_replicas_in_sync)


# ---- v1 AdamOptimizer ----------------------------------------------------------
# Checked on TensorFlow 2.21 (and the same code in 2.15). The v1 optimizer
# computes each dense update of a resource variable in its private
# `_resource_apply_dense(grad, var)`, from its private hyperparameter tensors
# (`_lr_t`, `_beta1_t`, `_beta2_t`, `_epsilon_t`, made by `_prepare` once per
# `apply_gradients` call), its beta-power accumulators and its "m" and "v"
# slots (`_slots`, filled for every variable before any update).
_adam_lock = threading.Lock()
_adam_users = [0]
_adam_kernel_method: list[Any] = []


class AdamDenseUpdate:
    """One dense `AdamOptimizer` update, as the kernel would make it."""

    def __init__(self, optimizer: Any, grad: Any, var: Any, kernel_method: Any) -> None:
        self._optimizer = optimizer
        self._kernel_method = kernel_method
        self.grad = grad
        self.var = var
        self.use_locking = bool(optimizer._use_locking)

    def call_key(self) -> Any:
        """Identifies the `apply_gradients` call this update belongs to."""
        return self._optimizer._lr_t.ref()

    def updated_elements(self) -> int | None:
        """Elements of all the variables the optimizer updates (None: unknown)."""
        total = 0
        for slot in self._optimizer._slots.get("m", {}).values():
            size = slot.shape.num_elements()
            if size is None:
                return None
            total += size
        return total

    def arguments(self) -> dict[str, Any]:
        """The kernel's inputs but var and grad, uncast."""
        optimizer = self._optimizer
        beta1_power, beta2_power = optimizer._get_beta_accumulators()
        return {
            "m": optimizer.get_slot(self.var, "m").handle,
            "v": optimizer.get_slot(self.var, "v").handle,
            "beta1_power": beta1_power,
            "beta2_power": beta2_power,
            "learning_rate": optimizer._lr_t,
            "beta1": optimizer._beta1_t,
            "beta2": optimizer._beta2_t,
            "epsilon": optimizer._epsilon_t,
        }

    def kernel_update(self) -> Any:
        """TensorFlow's own update op (`ResourceApplyAdam`)."""
        return self._kernel_method(self._optimizer, self.grad, self.var)


@contextlib.contextmanager
def v1_adam_dense_update(update: Any) -> Iterator[None]:
    """Routes `AdamOptimizer._resource_apply_dense` through `update` meanwhile.

    `update(AdamDenseUpdate)` returns the update op. The method is replaced
    while any thread is inside this context and TensorFlow's own is put back
    when none is, so Adam outside the Estimator's traces is untouched.
    Subclasses that define the method themselves keep theirs.
    """
    from tensorflow.python.training import adam

    with _adam_lock:
        if not _adam_users[0]:
            kernel_method = adam.AdamOptimizer.__dict__["_resource_apply_dense"]

            def _resource_apply_dense(optimizer: Any, grad: Any, var: Any) -> Any:
                return update(AdamDenseUpdate(optimizer, grad, var, kernel_method))

            _resource_apply_dense.__doc__ = kernel_method.__doc__
            adam.AdamOptimizer._resource_apply_dense = _resource_apply_dense
            _adam_kernel_method[:] = [kernel_method]
        _adam_users[0] += 1
    try:
        yield
    finally:
        with _adam_lock:
            _adam_users[0] -= 1
            if not _adam_users[0]:
                adam.AdamOptimizer._resource_apply_dense = _adam_kernel_method.pop()


# ---- tf.compat.v1 dataset iterators --------------------------------------------
# Checked on TensorFlow 2.21. `tf.compat.v1.data.make_one_shot_iterator`,
# `make_initializable_iterator` and the deprecated `Dataset.make_*_iterator`
# methods all end in the private `DatasetV1._make_one_shot_iterator` and
# `DatasetV1._make_initializable_iterator` (a V2 dataset is first wrapped in
# a `DatasetV1Adapter`). TensorFlow has no public hook to see the iterators
# an input_fn makes; these two methods are replaced while a thread has a
# redirect active and restored when no thread has one.
_iterator_redirect_lock = threading.Lock()
_iterator_redirect_users = [0]
_iterator_redirects = threading.local()
_restore_iterators: list[Any] = []


@contextlib.contextmanager
def redirect_v1_iterators(make_iterator: Callable[[Any], Any]) -> Iterator[None]:
    """Makes this thread's v1 iterator constructors call `make_iterator(dataset)`.

    Other threads keep TensorFlow's constructors. Redirects nest: the
    innermost one wins until it ends.
    """
    from tensorflow.python.data.ops import dataset_ops

    dataset_class = dataset_ops.DatasetV1
    with _iterator_redirect_lock:
        if _iterator_redirect_users[0] == 0:
            originals = (
                dataset_class.__dict__["_make_one_shot_iterator"],
                dataset_class.__dict__["_make_initializable_iterator"],
            )

            def one_shot(dataset: Any) -> Any:
                stack = getattr(_iterator_redirects, "stack", None)
                if stack:
                    return stack[-1](dataset)
                return originals[0](dataset)

            def initializable(dataset: Any, shared_name: Any = None) -> Any:
                stack = getattr(_iterator_redirects, "stack", None)
                if stack:
                    return stack[-1](dataset)
                return originals[1](dataset, shared_name)

            dataset_class._make_one_shot_iterator = one_shot
            dataset_class._make_initializable_iterator = initializable
            _restore_iterators[:] = [originals]
        _iterator_redirect_users[0] += 1
    stack = _iterator_redirects.__dict__.setdefault("stack", [])
    stack.append(make_iterator)
    try:
        yield
    finally:
        stack.pop()
        with _iterator_redirect_lock:
            _iterator_redirect_users[0] -= 1
            if _iterator_redirect_users[0] == 0:
                one_shot_method, initializable_method = _restore_iterators.pop()
                dataset_class._make_one_shot_iterator = one_shot_method
                dataset_class._make_initializable_iterator = initializable_method


# ---- object-based checkpoints --------------------------------------------------
# Checked on TensorFlow 2.21 (the format is that of 2.15). An object-based
# checkpoint stores, under the key `_CHECKPOINTABLE_OBJECT_GRAPH`, a
# serialized `TrackableObjectGraph` proto whose attributes give each saved
# variable's name at save time (`full_name`) beside its key; TF1's Saver read
# such checkpoints by name through it. The proto's module is generated code
# TensorFlow does not export.
OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


def object_graph_names(serialized: bytes) -> dict[str, str]:
    """Variable name at save time -> checkpoint key, from an object graph."""
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(serialized)
    names: dict[str, str] = {}
    for node in graph.nodes:
        for attribute in node.attributes:
            if attribute.full_name:
                names.setdefault(attribute.full_name, attribute.checkpoint_key)
    return names
