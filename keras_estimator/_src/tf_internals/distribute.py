"""tf.distribute internals: estimator loss scaling, cluster start, auto-sharding.

Checked on TensorFlow 2.21.

Private symbols touched: `StrategyBase._scale_loss_for_estimator_enabled`,
a graph's `_is_loss_scaled_by_optimizer` and `_last_loss_reduction`,
the eager context's `_context_handle`, `coordination_service` and
`configure_coordination_service`, the `coordination_config_pb2` protos
(`CoordinatedJob`, `CoordinationServiceConfig.cluster_register_with_barrier`)
`input_ops.auto_shard_dataset`, `values.PerReplicaSpec` with its
`_value_specs`, `MirroredExtended._cross_device_ops`, and a strategy's
`extended._container_strategy_weakref`.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any

TOUCHES = (
    "tensorflow.python.distribute.distribute_lib"
    ":StrategyBase._scale_loss_for_estimator_enabled",
    "tensorflow.python.framework.ops:Graph()._is_loss_scaled_by_optimizer",
    "tensorflow.python.framework.ops:Graph()._last_loss_reduction",
    "tensorflow.python.eager.context:context",
    "tensorflow.python.eager.context:Context()._context_handle",
    "tensorflow.python.eager.context:Context.coordination_service",
    "tensorflow.python.eager.context:Context.configure_coordination_service",
    "tensorflow.compiler.xla.tsl.protobuf.coordination_config_pb2:CoordinatedJob",
    "tensorflow.compiler.xla.tsl.protobuf.coordination_config_pb2"
    ":CoordinationServiceConfig.DESCRIPTOR.fields_by_name.cluster_register_with_barrier",
    "tensorflow.python.distribute.input_ops:auto_shard_dataset",
    "tensorflow.python.distribute.values:PerReplicaSpec",
    "tensorflow.python.distribute.values:PerReplicaSpec()._value_specs",
    "tensorflow.python.distribute.mirrored_strategy:MirroredExtended()._cross_device_ops",
    "tensorflow.python.distribute.mirrored_strategy"
    ":MirroredExtended()._container_strategy_weakref",
)


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


def loss_scaled_by_optimizer(graph: Any) -> bool:
    """Whether a v1 optimizer divided a loss of `graph` by the replica count.

    Checked on TensorFlow 2.21. A v1 optimizer's `compute_gradients` marks
    the graph so when it scales the loss (`estimator_loss_scaling`);
    tf.estimator 2.15 then reported its distributed loss reduced by the
    loss reduction (a mean over replicas), and summed it otherwise.
    """
    return bool(getattr(graph, "_is_loss_scaled_by_optimizer", False))


def record_loss_reduction(reduction: str) -> None:
    """Records on the default graph how a loss was reduced, as TF1's losses did.

    Checked on TensorFlow 2.21. `tf.compat.v1.losses.compute_weighted_loss`
    (and tf.keras 2's, which tf.estimator 2.15's heads called) wrote its
    reduction to the graph's private `_last_loss_reduction`;
    `tf.compat.v1.distribute.get_loss_reduction()` reads it while
    `estimator_loss_scaling` is active: a summed loss ("sum", or v1's
    "weighted_sum") gives `ReduceOp.SUM`, so v1 optimizers do not divide it
    by the replica count; any other reduction gives `MEAN`, and they do.
    """
    import tensorflow as tf

    tf.compat.v1.get_default_graph()._last_loss_reduction = reduction


def mark_loss_scaled_by_optimizer(scaled: bool) -> None:
    """Marks the default graph as a v1 optimizer's `compute_gradients` did.

    Checked on TensorFlow 2.21: it sets the graph's private
    `_is_loss_scaled_by_optimizer` to whether it divided the loss by the
    replica count, which `reported_loss_reduction` reads.
    """
    import tensorflow as tf

    tf.compat.v1.get_default_graph()._is_loss_scaled_by_optimizer = scaled


def reported_loss_reduction(graph: Any) -> Any:
    """How tf.estimator 2.15 reduced a distributed training loss it reported.

    By the v1 loss reduction (a mean) when a v1 optimizer divided each
    replica's loss of `graph` by the replica count, else summed. To be
    called while `estimator_loss_scaling` is active, as 2.15 asked it.
    """
    import tensorflow as tf

    if not loss_scaled_by_optimizer(graph):
        return tf.distribute.ReduceOp.SUM
    return tf.compat.v1.distribute.get_loss_reduction()


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


def as_read_in_a_loop(element_spec: Any) -> Any:
    """`element_spec` of a distributed input, as a compiled loop reads its elements.

    Checked on TensorFlow 2.21. Inside a function, a distributed iterator of
    several replicas gives a replica whose input has run out an empty batch
    (batch size 0) beside the others' last ones, so what it yields there has
    an unknown batch size, whatever the dataset's spec says. A step traced
    for the loop must be traced for that: every per-replica tensor's first
    dimension becomes unknown.
    """
    import tensorflow as tf
    from tensorflow.python.distribute import values

    def relax(spec: Any) -> Any:
        if isinstance(spec, tf.TensorSpec) and spec.shape.rank:
            return tf.TensorSpec([None, *spec.shape[1:]], spec.dtype, spec.name)
        return spec

    def per_replica(spec: Any) -> Any:
        if isinstance(spec, values.PerReplicaSpec):
            return values.PerReplicaSpec(*(relax(s) for s in spec._value_specs))
        return spec

    return tf.nest.map_structure(per_replica, element_spec)


def as_tf2_strategy(strategy: Any) -> Any:
    """A tf.compat.v1 `MirroredStrategy` or `MultiWorkerMirroredStrategy` as TF2's.

    TF1-era programs give `RunConfig` the v1 classes, siblings of TF2's (not
    subclasses) whose `run` returns nested results; the Estimator runs TF2's,
    as 2.15 ran either. Any other strategy is returned as given.
    """
    import tensorflow as tf

    if isinstance(strategy, tf.compat.v1.distribute.experimental.MultiWorkerMirroredStrategy):
        return _as_tf2_multi_worker(strategy)
    if not isinstance(strategy, tf.compat.v1.distribute.MirroredStrategy) or isinstance(
        strategy, tf.distribute.MirroredStrategy
    ):
        return strategy
    # Over the same devices and cross-device ops.
    extended = strategy.extended
    return tf.distribute.MirroredStrategy(
        devices=list(extended.worker_devices),
        cross_device_ops=getattr(extended, "_cross_device_ops", None),
    )


# Each v1 multi-worker strategy's TF2 view, kept as long as the strategy is.
_TF2_MULTI_WORKER_VIEWS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _as_tf2_multi_worker(strategy: Any) -> Any:
    """TF2's `MultiWorkerMirroredStrategy` over the v1 strategy's own workers.

    Checked on TensorFlow 2.21. Both classes wrap the same
    `CollectiveAllReduceExtended`, which joined the cluster when the v1
    strategy was made (its server, collective ops and coordination service
    are the process's; a second strategy cannot start them again). The view
    is TF2's class around that very extended object, which then names the
    view as its strategy, as `Strategy.__deepcopy__` re-points a copy's. The
    same view is returned for the same strategy.
    """
    import tensorflow as tf

    view = _TF2_MULTI_WORKER_VIEWS.get(strategy)
    if view is None:
        cls = tf.distribute.MultiWorkerMirroredStrategy
        view = cls.__new__(cls)
        tf.distribute.Strategy.__init__(view, strategy.extended)
        strategy.extended._container_strategy_weakref = weakref.ref(view)
        _TF2_MULTI_WORKER_VIEWS[strategy] = view
    return view
