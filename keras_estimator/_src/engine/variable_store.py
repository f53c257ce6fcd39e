"""Variables of a model_fn, kept across traces, modes and calls.

A model_fn creates its variables while it is traced (Keras layers built in
it, `tf.compat.v1.get_variable`, v1 metrics and optimizer slots). TF1 built a
new graph per call and restored weights from the checkpoint; here the model_fn
is traced into TF2 functions, possibly several times, so the variables must
outlive each trace. The store hands every trace the same variable for the same
TF1 name:

* a *building* trace may create variables; they are made eagerly, outside the
  function being traced, so no `tf.function` ever owns (or re-creates) them;
* later traces only look variables up by name;
* names follow TF1 rules (name scope + name, `_1` suffixes for repeats within
  one trace), which is what TF1 checkpoints are keyed by;
* each trace's graph gets the TF1 collections v1 code reads
  (`TRAINABLE_VARIABLES` for `minimize`, `GLOBAL_STEP`, `LOCAL_VARIABLES`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

from keras_estimator._src.engine import v1_adam
from keras_estimator._src.engine.mutable_tables import TableRegistry
from keras_estimator._src.tf_internals import (
    function_calls,
    graph_seeds,
    keras_naming,
    variable_ops,
    variable_scopes,
)

_GraphKeys = tf.compat.v1.GraphKeys
_LOCAL_COLLECTIONS = frozenset(
    {_GraphKeys.LOCAL_VARIABLES, _GraphKeys.METRIC_VARIABLES}
)
_VARIABLE_COLLECTIONS = (
    _GraphKeys.GLOBAL_VARIABLES,
    _GraphKeys.TRAINABLE_VARIABLES,
    _GraphKeys.LOCAL_VARIABLES,
    _GraphKeys.METRIC_VARIABLES,
    _GraphKeys.MODEL_VARIABLES,
)
_VARIABLE_ARGS = (
    "trainable",
    "dtype",
    "shape",
    "constraint",
    "synchronization",
    "aggregation",
)
GLOBAL_STEP_NAME = "global_step"


@dataclasses.dataclass
class _Entry:
    variable: tf.Variable
    initial_value: Callable[[], Any]
    is_local: bool
    collections: tuple[str, ...]
    options: dict[str, Any] = dataclasses.field(default_factory=dict)


class _TraceState:
    """Names and collection entries already handed out in one trace.

    Under a strategy with several replicas each replica traces the model_fn
    in its own thread, and graph-wide name scopes make replica 1's names
    differ (`accuracy_1/total` for replica 0's `accuracy/total`). Replicas
    ask for the same variables in the same order, so replica k's n-th request
    is given replica 0's n-th name (`replica_names`).
    """

    def __init__(self, replica: int | None = None, replica_names: list[str] | None = None) -> None:
        self.name_counts: dict[str, int] = {}
        self.registered: set[int] = set()
        self.replica = replica
        self.replica_names = replica_names if replica_names is not None else []
        self.position = 0

    def replica_name(self, name: str) -> str:
        """The name replica 0 used for this request (recording it on replica 0)."""
        if self.replica == 0:
            self.replica_names.append(name)
        elif self.replica is not None and self.position < len(self.replica_names):
            name = self.replica_names[self.position]
        self.position += 1
        return name

    def unique(self, name: str) -> str:
        count = self.name_counts.get(name, 0)
        self.name_counts[name] = count + 1
        return name if count == 0 else f"{name}_{count}"


class CheckpointVariables(dict):  # type: ignore[type-arg]
    """Name -> variable, written through an object-based `checkpoint`.

    `checkpoint` is the `tf.train.Checkpoint` a model_fn gave as its
    Scaffold's saver (see `checkpoint/object_checkpoint.py`).
    """

    def __init__(self, variables: dict[str, tf.Variable], checkpoint: Any) -> None:
        super().__init__(variables)
        self.checkpoint = checkpoint


def is_object_checkpoint(saver: Any) -> bool:
    """Whether a Scaffold's saver is a `tf.train.Checkpoint` (either version)."""
    return isinstance(saver, (tf.train.Checkpoint, tf.compat.v1.train.Checkpoint))


class VariableStore:
    """Owns every variable the model_fn creates, keyed by its TF1 name."""

    def __init__(self, strategy: tf.distribute.Strategy | None = None) -> None:
        self._entries: dict[str, _Entry] = {}
        self._strategy = strategy
        self._creating = threading.local()
        self._new_names: list[str] = []
        self._pending: dict[str, _Entry] = {}
        self._replica_names: list[str] = []
        self._checkpoint: Any = None
        # (ids of the local entries, their traced reset or None: eager).
        self._local_reset: tuple[tuple[int, ...], Any] | None = None
        # Whether a building trace creates variables where asked (a trace
        # whose variables made under tf.init_scope are plain eager ones).
        self.create_at_once = False
        # The mutable lookup tables the model_fn's traces share.
        self.tables = TableRegistry()

    @property
    def strategy(self) -> tf.distribute.Strategy | None:
        """The distribution strategy variables are made under (None: none)."""
        return self._strategy

    # ---- lookup -------------------------------------------------------------
    def get(self, name: str) -> tf.Variable | None:
        entry = self._entries.get(name)
        return entry.variable if entry else None

    def saveable(self) -> dict[str, tf.Variable]:
        """Variables a checkpoint holds: all but metric/local ones.

        With an object-based Checkpoint (`use_checkpoint`), the dict also
        carries it, and checkpoints are written through it.
        """
        variables = {n: e.variable for n, e in self._entries.items() if not e.is_local}
        if self._checkpoint is None:
            return variables
        return CheckpointVariables(variables, self._checkpoint)

    def checkpointed(self) -> dict[str, Any]:
        """What a checkpoint of model_dir holds: `saveable()` and, under their
        2.15 keys, the contents of the model_fn's mutable lookup tables."""
        saveable = self.saveable()
        parts = self.tables.checkpoint_parts()
        if not parts or isinstance(saveable, CheckpointVariables):
            return saveable
        return {**saveable, **parts}

    def use_checkpoint(self, checkpoint: Any) -> None:
        """Writes checkpoints through a model_fn's `tf.train.Checkpoint`."""
        self._checkpoint = checkpoint

    def local_variables(self) -> list[tf.Variable]:
        """Metric and other local variables: evaluation state, not model state."""
        return [e.variable for e in self._entries.values() if e.is_local]

    def pop_new_names(self) -> list[str]:
        """Names created since the last call (so callers can restore them)."""
        names, self._new_names = self._new_names, []
        return names

    def mark_local(self, variables: Any) -> None:
        """Excludes the given variables (e.g. a Keras metric's) from checkpoints."""
        ids = {id(v) for v in map(as_tf_variable, variables) if v is not None}
        for entry in [*self._entries.values(), *self._pending.values()]:
            if not ids.isdisjoint(_ids_of(entry.variable)):
                entry.is_local = True

    def mark_metric(self, key: str, metric: Any) -> None:
        """Keeps the Keras metric `eval_metric_ops[key]` out of checkpoints.

        Raises:
            ValueError: the metric was made outside model_fn (a module-level
                `keras.metrics.Mean()`): its variables are not the model_fn's,
                evaluation would neither reset nor update them, and would
                report what training added to it. tf.estimator 2.15 refused it
                too (RuntimeError "Attempting to capture an EagerTensor").
        """
        owned = {
            id_
            for entry in [*self._entries.values(), *self._pending.values()]
            for id_ in _ids_of(entry.variable)
        }
        outside = [
            v for v in map(as_tf_variable, metric.variables) if v is not None and id(v) not in owned
        ]
        if outside:
            raise ValueError(
                f"eval_metric_ops[{key!r}] is a {type(metric).__name__} metric "
                f"({metric.name!r}) made outside model_fn: its variables "
                f"({outside[0].name}, ...) belong to no evaluation, which would "
                "report what training added to it (tf.estimator 2.15 could not "
                "use it either). Create the metric inside model_fn."
            )
        self.mark_local(metric.variables)

    def reset_local_variables(self) -> None:
        """Re-initialises metric variables, as each TF1 evaluation graph did.

        Local variables whose initial values are constants (the metrics'
        zeros) are reset by one traced call (`_constant_resets`) instead of
        two eager operations each; any other initial value is computed
        eagerly, as it always was.
        """
        local = [entry for entry in self._entries.values() if entry.is_local]
        if not local:
            return
        key = tuple(map(id, local))
        reset = self._local_reset
        if reset is None or reset[0] != key:
            reset = self._local_reset = (key, _constant_resets(local))
        if reset[1] is not None:
            function_calls.call_traced(reset[1])
            return
        for entry in local:
            entry.variable.assign(entry.initial_value())

    def adopt(self, name: str, variable: tf.Variable, is_local: bool) -> None:
        """Keeps a variable made elsewhere (a built Keras model's) under `name`."""
        entry = self._entries.get(name)
        if entry is not None:
            if entry.variable is not variable:
                raise ValueError(
                    f"Variable name {name!r} is taken by another variable. "
                    "Give the model's layers distinct names."
                )
            return
        initial = tf.identity(variable.read_value()) if is_local else None
        self._entries[name] = _Entry(
            variable,
            lambda: initial,
            is_local,
            (),
            {"trainable": variable.trainable, "dtype": variable.dtype},
        )
        self._new_names.append(name)

    # ---- the global step ----------------------------------------------------
    def global_step(self) -> tf.Variable:
        """The int64 `global_step` variable, created on first use."""
        entry = self._entries.get(GLOBAL_STEP_NAME)
        if entry is None:
            entry = self._create(
                GLOBAL_STEP_NAME,
                lambda: tf.zeros([], tf.int64),
                {
                    "trainable": False,
                    "dtype": tf.int64,
                    "aggregation": tf.VariableAggregation.ONLY_FIRST_REPLICA,
                },
                (_GraphKeys.GLOBAL_VARIABLES, _GraphKeys.GLOBAL_STEP),
            )
        return entry.variable

    # ---- tracing ------------------------------------------------------------
    @contextlib.contextmanager
    def scope(self, allow_creation: bool) -> Iterator[_TraceState]:
        """Routes variable creation in the enclosed trace through the store.

        Args:
            allow_creation: whether a name not yet in the store may be created
                (true for the building trace of a mode, false afterwards).
        """
        # Each trace lists its own variables (those of this store), as each
        # TF1 graph did, never those of earlier traces or other Estimators.
        variable_scopes.own_variable_collections(tf.compat.v1.get_default_graph())
        replica = _replica_index()
        if replica == 0:
            self._replica_names = []
        trace = _TraceState(replica, self._replica_names)

        def creator(next_creator: Callable[..., Any], **kwargs: Any) -> Any:
            if getattr(self._creating, "active", False):
                return next_creator(**kwargs)
            return self._provide(next_creator, trace, allow_creation, kwargs)

        # Names are taken from the root scope, as in a new TF1 graph, whatever
        # loop or replica scope the step is traced in. Every trace on the
        # store's variables, and every cross-replica update of them, runs in
        # this scope: v1 Adam updates of small models are made inline there.
        with (
            tf.compat.v1.name_scope(None),
            tf.variable_creator_scope(creator),
            keras_naming.fresh_layer_names(),
            variable_scopes.fresh_variable_scopes(),
            v1_adam.inline_small_updates(),
        ):
            global_step = self._entries[GLOBAL_STEP_NAME]
            self._register(trace, global_step)
            variable_scopes.list_in_variable_store(GLOBAL_STEP_NAME, global_step.variable)
            yield trace

    def _provide(
        self,
        next_creator: Callable[..., Any],
        trace: _TraceState,
        allow_creation: bool,
        kwargs: dict[str, Any],
    ) -> tf.Variable:
        name = _qualified_name(kwargs.get("name"))
        replica = _replica_copy(name)
        if replica is not None:
            # A strategy's own creator asks, device by device, for the copies
            # of a variable made in cross-replica context (a v1 optimizer's
            # `merge_call`): hand back the copies the store already holds.
            base, index = replica
            return self._component(self._entries.get(base), base, index)
        name = trace.replica_name(trace.unique(name))
        entry = self._entries.get(name) or self._pending.get(name)
        if entry is not None and _wants_component(entry.variable):
            return self._component(entry, name, 0)
        if entry is None:
            if not allow_creation:
                raise ValueError(
                    f"model_fn created a new variable {name!r} on a later call "
                    "than the first one of its mode. Variables must be created "
                    "the same way on every call: build layers inside model_fn "
                    "unconditionally and give them stable names."
                )
            if self.create_at_once:
                entry = self._create_now(name, kwargs)
                if _wants_component(entry.variable):
                    # A strategy's own creator asked (cross-replica, as in a
                    # v1 optimizer's `merge_call`): it wraps the copies itself.
                    self._register(trace, entry)
                    return self._component(entry, name, 0)
            else:
                entry = self._template(next_creator, name, kwargs)
        else:
            _check_shape(name, entry.variable, kwargs)
            self._count_initializer_seeds(kwargs)
        self._register(trace, entry)
        return entry.variable

    def _count_initializer_seeds(self, kwargs: dict[str, Any]) -> None:
        """Moves the trace's random op count on by an existing variable's initializer.

        tf.estimator 2.15 built every variable's initializer in each call's
        new graph, restored or not, so a seeded random op the model_fn made
        after it counted the initializer's random ops first, in every call.
        """
        initial_value = kwargs.get("initial_value")
        if callable(initial_value):
            self._creating.active = True
            try:
                _graph_seeded(initial_value)
            finally:
                self._creating.active = False

    def _component(self, entry: _Entry | None, name: str, index: int) -> tf.Variable:
        components = getattr(entry.variable, "values", None) if entry else None
        if not components or index >= len(components):
            raise ValueError(
                f"A distribution strategy asked for copy {index} of variable "
                f"{name!r}, which the Estimator does not hold on that device. "
                "Create variables inside model_fn, not in a merge_call."
            )
        return components[index]

    def _template(
        self, next_creator: Callable[..., Any], name: str, kwargs: dict[str, Any]
    ) -> _Entry:
        """A stand-in variable for the building trace; made real by `materialize`."""
        collections = tuple(kwargs.get("collections") or ())
        initial_value = _initial_value_fn(name, kwargs)
        self._creating.active = True
        try:
            # Before the stand-in: it draws its (unused) value eagerly.
            seeded = _graph_seeded(initial_value)
            # Named as the real variable will be: v1 optimizers name slots
            # after their variable's name.
            with tf.compat.v1.name_scope(None):
                stand_in = next_creator(
                    **dict(kwargs, name=name, initial_value=initial_value)
                )
        finally:
            self._creating.active = False
        variable_ops.name_ops_as_in_graphs(stand_in)
        entry = _Entry(
            stand_in,
            seeded or initial_value,
            bool(_LOCAL_COLLECTIONS.intersection(collections)),
            collections,
            {k: kwargs.get(k) for k in _VARIABLE_ARGS},
        )
        self._pending[name] = entry
        return entry

    def _create_now(self, name: str, kwargs: dict[str, Any]) -> _Entry:
        """The variable itself, made outside the trace under way."""
        collections = tuple(kwargs.get("collections") or ())
        initial_value = _initial_value_fn(name, kwargs)
        self._creating.active = True
        try:
            seeded = _graph_seeded(initial_value)
        finally:
            self._creating.active = False
        return self._create(
            name,
            seeded or initial_value,
            {k: kwargs.get(k) for k in _VARIABLE_ARGS},
            collections,
        )

    def materialize(self) -> None:
        """Creates, outside any trace, the variables the building trace asked for."""
        pending, self._pending = self._pending, {}
        seeded = _seeded_values(
            {n: e.initial_value for n, e in pending.items() if isinstance(e.initial_value, _Seeded)}
        )
        for name, entry in pending.items():
            value = seeded.get(name)
            self._create(
                name,
                entry.initial_value if value is None else functools.partial(_constant, value),
                entry.options,
                entry.collections,
                is_local=entry.is_local,
            )

    def _create(
        self,
        name: str,
        initial_value: Callable[[], Any],
        options: dict[str, Any],
        collections: tuple[str, ...],
        is_local: bool | None = None,
    ) -> _Entry:
        options = {k: v for k, v in options.items() if v is not None}
        if options.get("synchronization") == tf.VariableSynchronization.AUTO:
            options.pop("synchronization")
        self._creating.active = True
        try:
            with contextlib.ExitStack() as stack:
                stack.enter_context(_collections_kept(tf.compat.v1.get_default_graph()))
                stack.enter_context(tf.init_scope())
                stack.enter_context(tf.compat.v1.name_scope(None))
                if self._strategy is not None and (
                    not tf.distribute.has_strategy() or tf.distribute.in_cross_replica_context()
                ):
                    # A strategy's scope opens the current TF1 variable scope
                    # again (the model_fn's `dense`, in a trace made outside
                    # the strategy), which would prefix the name once more.
                    stack.enter_context(
                        tf.compat.v1.variable_scope(tf.compat.v1.VariableScope(None, name=""))
                    )
                    stack.enter_context(self._strategy.scope())
                variable = tf.Variable(initial_value, name=name, **options)
        finally:
            self._creating.active = False
        variable_ops.name_ops_as_in_graphs(variable)
        if not isinstance(variable, tf.Variable):
            # A ParameterServerStrategy with a variable_partitioner splits
            # variables into shards; TF1 checkpoints and v1 code want them whole.
            raise ValueError(
                f"The distribution strategy made variable {name!r} a "
                f"{type(variable).__name__}, not a tf.Variable. The Estimator "
                "keeps each variable whole: create the ParameterServerStrategy "
                "without variable_partitioner."
            )
        if is_local is None:
            is_local = bool(_LOCAL_COLLECTIONS.intersection(collections))
        entry = _Entry(variable, initial_value, is_local, collections, options)
        self._entries[name] = entry
        self._new_names.append(name)
        return entry

    def _register(self, trace: _TraceState, entry: _Entry) -> None:
        """Adds a variable to the current graph's TF1 collections, once."""
        variable = entry.variable
        if id(variable) in trace.registered:
            return
        trace.registered.add(id(variable))
        graph = tf.compat.v1.get_default_graph()
        collections = list(entry.collections)
        if not collections:
            collections = [
                _GraphKeys.LOCAL_VARIABLES
                if entry.is_local
                else _GraphKeys.GLOBAL_VARIABLES
            ]
        if variable.trainable and _GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(_GraphKeys.TRAINABLE_VARIABLES)
        for key in collections:
            if not any(v is variable for v in graph.get_collection(key)):
                graph.add_to_collection(key, variable)


@contextlib.contextmanager
def _collections_kept(graph: Any) -> Iterator[None]:
    """Leaves `graph`'s variable collections as they were before the enclosed creation.

    A variable made in a replica's trace (MirroredStrategy's first replica)
    comes with its per-device copies, which TensorFlow adds to that trace's
    graph collections (`TRAINABLE_VARIABLES`) beside the mirrored variable:
    a v1 optimizer would then train each variable twice. The store registers
    what a trace's collections hold itself (`_register`).
    """
    keys = _VARIABLE_COLLECTIONS
    before = {key: len(graph.get_collection(key)) for key in keys}
    try:
        yield
    finally:
        for key in keys:
            del graph.get_collection_ref(key)[before[key] :]


def as_tf_variable(value: Any) -> tf.Variable | None:
    """The tf.Variable that `value` is or that a Keras 3 variable wraps; else None."""
    if isinstance(value, tf.Variable):
        return value
    inner = getattr(value, "value", None)
    if isinstance(inner, tf.Variable) and hasattr(value, "path"):
        return inner
    return None


def _ids_of(variable: Any) -> set[int]:
    """The ids a trace may hold `variable` by: its own, and its per-device copies'.

    A trace outside the store's strategy (evaluate() without eval_distribute)
    gets a sync-on-read variable's first copy (`_wants_component`), so a
    metric made there holds that copy, not the strategy's variable.
    """
    ids = {id(variable)}
    if isinstance(variable, tf.distribute.DistributedValues):
        ids.update(map(id, variable.values))
    return ids


def _wants_component(variable: Any) -> bool:
    """Whether a trace gets `variable`'s first copy instead of `variable`.

    In cross-replica context, as a strategy's own creator would. So does a
    trace outside any strategy (the building trace of a later mode) asking
    for a sync-on-read variable: `tf.compat.v1.metrics` update theirs with
    `assign_add`, which such a variable refuses outside a replica, and the
    building trace runs nothing.
    """
    if not isinstance(variable, tf.distribute.DistributedValues):
        return False
    if tf.distribute.in_cross_replica_context():
        return True
    return (
        not tf.distribute.has_strategy()
        and variable.synchronization == tf.VariableSynchronization.ON_READ
    )


def _qualified_name(name: str | None) -> str:
    """The TF1 name a variable created here would get (without ':0').

    A name ending in '/' is whole, as TensorFlow's name scopes read it: a v1
    optimizer names its slots so (`w/Adam/`), and in TF1 a slot was named
    after its variable alone, whatever name scope `minimize` ran in.
    """
    raw = (name or "Variable").split(":")[0]
    if raw.endswith("/") and raw.strip("/"):
        return raw.rstrip("/")
    base = raw.rstrip("/")
    keras_path = keras_naming.keras_scope_path()
    if keras_path and "/" not in base:
        return f"{keras_path}/{base}"
    scope = tf.compat.v1.get_default_graph().get_name_scope()
    if scope and not base.startswith(scope + "/"):
        return f"{scope}/{base}"
    return base


def _replica_index() -> int | None:
    """This replica's index when tracing for several replicas, else None."""
    if tf.distribute.get_strategy().num_replicas_in_sync == 1:
        return None
    context = tf.distribute.get_replica_context()
    if context is None:
        return None
    index = tf.get_static_value(context.replica_id_in_sync_group)
    return int(index) if index is not None else None


def _replica_copy(name: str) -> tuple[str, int] | None:
    """`(base name, replica index)` for `name/replica_<i>`, MirroredStrategy's copies."""
    base, _, last = name.rpartition("/replica_")
    if base and last.isdigit():
        return base, int(last)
    return None


def _initial_value_fn(name: str, kwargs: dict[str, Any]) -> Callable[[], Any]:
    """A callable giving the variable's initial value outside the trace."""
    initial_value = kwargs.get("initial_value")
    if callable(initial_value):
        return initial_value
    if isinstance(initial_value, tf.Tensor) and not hasattr(initial_value, "numpy"):
        constant = tf.get_static_value(initial_value)
        if constant is None:
            raise ValueError(
                f"Variable {name!r} is initialised from a tensor computed inside "
                f"model_fn ({initial_value!r}), which cannot be evaluated before "
                "the first step. Pass an initializer (a callable or constant) "
                "instead, e.g. `tf.compat.v1.get_variable(..., initializer="
                "tf.zeros_initializer())`."
            )
        return lambda: constant
    return lambda: initial_value


def _graph_seeded(initial_value: Callable[[], Any]) -> Callable[[], Any] | None:
    """`initial_value` computed with the seeds a TF1 graph gives it, or None.

    Called where the model_fn creates the variable, in its trace. A random
    initializer without a seed of its own gets, with a graph seed set
    (`RunConfig.tf_random_seed`), (graph seed, n) from the trace's graph, n
    counting such random operations in it, as in tf.estimator 2.15's graph;
    computed eagerly it would take another (and one with its own seed would
    draw after the stand-in's draw). So the initializer is built here in a
    scratch graph, which moves the trace's count on by what it uses, as
    2.15's graph did, and is computed later in a function of its own starting
    from the same count, giving 2.15's values. None without a graph seed,
    for a Keras initializer (Keras seeds its own) and for one without random
    operations.
    """
    if tf.executing_eagerly() or not callable(initial_value) or _is_keras(initial_value):
        return None
    graph = tf.compat.v1.get_default_graph()
    seed = graph.seed
    if seed is None:
        return None  # unseeded: 2.15's values were random too
    first = graph_seeds.op_seed_count(graph)
    scratch = tf.Graph()
    scratch.seed = seed
    graph_seeds.set_op_seed_count(scratch, first)
    with scratch.as_default():
        initial_value()
    used = graph_seeds.op_seed_count(scratch) - first
    if used > 0:
        graph_seeds.set_op_seed_count(graph, first + used)
    seeded = any(
        op.node_def.attr[key].i
        for op in scratch.get_operations()
        for key in ("seed", "seed2")
        if key in op.node_def.attr
    )
    if not seeded:
        return None
    return _Seeded(initial_value, seed, first)


class _Seeded:
    """An initializer to compute from graph seed `seed` and count `first` (`_graph_seeded`)."""

    def __init__(self, initial_value: Callable[[], Any], seed: int, first: int) -> None:
        self.initial_value = initial_value
        self.seed = seed
        self.first = first

    def __call__(self) -> Any:
        return _seeded_values({"value": self})["value"]


def _seeded_values(initializers: dict[str, _Seeded]) -> dict[str, Any]:
    """Each initializer's value, all computed in one function."""
    if not initializers:
        return {}

    def compute() -> dict[str, Any]:
        graph = tf.compat.v1.get_default_graph()
        values = {}
        for name, seeded in initializers.items():
            graph.seed = seeded.seed
            graph_seeds.set_op_seed_count(graph, seeded.first)
            values[name] = seeded.initial_value()
        return values

    return dict(tf.compat.v1.wrap_function(compute, signature=[])())


def _constant(value: Any) -> Any:
    return value


def _is_keras(initial_value: Callable[[], Any]) -> bool:
    """Whether `initial_value` is (or wraps) a Keras initializer or function."""
    function = getattr(initial_value, "func", initial_value)
    module = getattr(function, "__module__", None) or type(function).__module__
    return module.split(".")[0] == "keras"


def _check_shape(name: str, variable: tf.Variable, kwargs: dict[str, Any]) -> None:
    shape = kwargs.get("shape")
    if shape is None:
        return
    wanted = tf.TensorShape(shape)
    if wanted.rank is not None and not wanted.is_compatible_with(variable.shape):
        raise ValueError(
            f"model_fn asks for variable {name!r} with shape {wanted}, but it "
            f"already exists with shape {variable.shape}. Give differently "
            "shaped variables different names."
        )


# Operations a traced reset may hold: its constants, its captured variables
# and their assignments. Anything else (a random draw, a read of another
# variable) is computed eagerly, as each reset always computed it.
_CONSTANT_RESET_OPS = frozenset(
    {"Const", "Placeholder", "AssignVariableOp", "NoOp", "Identity", "Fill", "Cast", "Reshape"}
)


def _constant_resets(local: list[_Entry]) -> Any:
    """A traced function assigning each local variable its initial value; None if one is not constant.

    Plain resource variables of this task only (no strategy's, none on a
    parameter server); the initial values are traced once and must be
    constants, so the function assigns the very values the eager reset
    computes.
    """
    if not all(_is_local_resource(entry.variable) for entry in local):
        return None

    def reset() -> None:
        for entry in local:
            entry.variable.assign(entry.initial_value())

    try:
        traced = tf.function(reset, autograph=False).get_concrete_function()
    except Exception:  # noqa: BLE001 - an initial value that cannot be traced stays eager
        return None
    if any(op.type not in _CONSTANT_RESET_OPS for op in traced.graph.get_operations()):
        return None
    return traced


def _is_local_resource(variable: Any) -> bool:
    if not isinstance(variable, tf.Variable) or isinstance(
        variable, tf.distribute.DistributedValues
    ):
        return False
    handle = getattr(variable, "handle", None)
    if not isinstance(handle, tf.Tensor) or handle.dtype != tf.resource:
        return False
    device = getattr(variable, "device", "") or ""
    return tf.DeviceSpec.from_string(device).job in (None, "localhost")
