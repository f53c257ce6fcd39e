"""Calling a model_fn inside a trace: `ModelFnTrace`.

Every step function of every mode calls the user's model_fn through
`ModelFnTrace.call`, inside the variable store's scope, so the model_fn's
variables are the store's whatever trace it runs in. The call validates the
returned `EstimatorSpec` and, in a mode's *building* trace (the first, made
by `ModelFnModel.build_mode` before any step runs: on one machine the step's
own trace), records what the spec tells the loop: its hooks and the name of
its loss.
"""

from __future__ import annotations

import contextlib
import linecache
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.base.estimator_spec import EstimatorSpec, check_runs_in
from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.engine import fetches as _fetches
from keras_estimator._src.engine import keras2_idioms, summaries, unfetched_ops
from keras_estimator._src.engine.variable_store import (
    VariableStore,
    is_object_checkpoint,
)
from keras_estimator._src.tf_internals import (
    checkpoint_initializers,
    distribute,
    graph_seeds,
    moving_average_names,
    object_restores,
    ordered_traces,
    pruning,
    v1_savers,
    variable_initializers,
)


def _initialize_tables(graph: Any, first: int) -> None:
    """Initializes the lookup tables this model_fn call made, once, now.

    A table (`tf.lookup.StaticHashTable`, `StaticVocabularyTable`) made in
    the model_fn holds an eager resource and puts the op that fills it in
    the graph's TABLE_INITIALIZERS, which 2.15's Scaffold ran when its
    session started (`tables_initializer()`); the steps here run only what
    they fetch. The ops are copied out with what they read and run once,
    as that session did. One reading the features is left as it is: the
    step then fails with TensorFlow's "Table not initialized".
    """
    ops = [
        op
        for op in graph.get_collection(tf.compat.v1.GraphKeys.TABLE_INITIALIZERS)[first:]
        if isinstance(op, tf.Operation) and op.graph is graph
    ]
    if not ops:
        return
    try:
        initialize = ordered_traces.fetches_alone(graph, ops, [], data_only=True)
    except pruning.PRUNE_ERRORS:
        return
    with tf.init_scope():
        initialize()


class ModelFnTrace:
    """The model_fn and what its calls recorded, shared by every mode.

    Args:
        model_fn: the user's model function (or a model_fn object).
        model_fn_args: the parameter names `model_fn` accepts.
        params: passed to model_fn as `params`.
        config: passed to model_fn as `config` (a `RunConfig`).
        store: the variable store shared by every mode.

    Attributes:
        spec_hooks: mode -> the hooks its EstimatorSpec returned (in TRAIN
            mode its training_chief_hooks first, then its training_hooks).
        chief_hook_counts: mode -> how many of `spec_hooks` lead as chief hooks.
        optimizers: mode -> the optimizers (v1 or Keras) whose
            `apply_gradients` its building trace called.
        loss_names: mode -> the graph name of its loss tensor.
        building: whether the current call is a building trace (may create
            variables).
        fetching: the hooks' fetches of the step being traced, if any (a
            training step then records summaries they ask for).
        shared: what the shared step being traced records, if one is (see
            `tracing_shared`).
    """

    def __init__(
        self,
        model_fn: Callable[..., Any],
        model_fn_args: tuple[str, ...],
        params: dict[str, Any],
        config: Any,
        store: VariableStore,
    ) -> None:
        self.model_fn = model_fn
        self._accepted = model_fn_args
        self._params = params
        self.config = config
        self.store = store
        self.building = False
        self.fetching: _fetches.FetchPlan | None = None
        self.shared: SharedTrace | None = None
        # The graph of the last building trace's model_fn call.
        self.model_fn_graph: Any = None
        self.spec_hooks: dict[str, tuple[Any, ...]] = {}
        # Mode -> its EstimatorSpec Scaffold's summary_op (None when unset).
        self.scaffold_summary_ops: dict[str, Any] = {}
        # Mode -> its Scaffold's saver when a tf.train.Checkpoint (else None):
        # what reads an object-based checkpoint in that mode.
        self.scaffold_checkpoints: dict[str, Any] = {}
        # Mode -> the settings of its Scaffold's tf.compat.v1.train.Saver,
        # where it gave one: model_dir's retention and checkpoint keys.
        self.scaffold_savers: dict[str, v1_savers.SaverSettings] = {}
        # Mode -> its Scaffold, where it gave an `init_fn` (run on a fresh
        # start, where 2.15's session creation ran it: `Estimator._sync`).
        self.scaffold_init_fns: dict[str, Any] = {}
        # Mode -> its Scaffold's `init_op` where it does more than initialize
        # (assigns values of its own): run on a fresh start, before `init_fn`.
        self.scaffold_init_ops: dict[str, Any] = {}
        self.chief_hook_counts: dict[str, int] = {}
        self.optimizers: dict[str, tuple[Any, ...]] = {}
        self.loss_names: dict[str, str] = {}
        # Seeded random ops' state, shared by every function of a mode.
        self.random_states: graph_seeds.RandomStates | None = graph_seeds.RandomStates()
        # Variable name -> where `init_from_checkpoint` in the model_fn said
        # its first value comes from (read on a fresh start, as 2.15's
        # initializers ran: `Estimator._sync`).
        self.checkpoint_initializers: dict[str, checkpoint_initializers.CheckpointInitializer] = {}

    def call(
        self,
        features: Any,
        labels: Any,
        mode: str,
        summary_step: tf.Tensor | None = None,
    ) -> EstimatorSpec:
        """Calls the model_fn in `mode` in the trace under way; returns its spec.

        In TRAIN mode, summaries are recorded when a hook asked for them
        (see `summaries`), at `summary_step`.
        """
        candidates = {
            "features": features,
            "labels": labels,
            "mode": mode,
            "params": self._params,
            "config": self.config,
        }
        plan = self.fetching
        dirs: list[str] = []
        fed = False
        if mode == ModeKeys.TRAIN and plan is not None:
            dirs = summaries.summary_dirs(plan.keys)
        elif mode == ModeKeys.TRAIN and self.shared is not None:
            # One trace for every directory hooks may ask for (`FedWriter`).
            fed = True
        step = summary_step if summary_step is not None else tf.constant(0, tf.int64)
        with (
            self.store.scope(allow_creation=self.building),
            summaries.recording_fed(step) if fed else summaries.recording(dirs, step) as recording,
            distribute.estimator_loss_scaling(tf.distribute.get_strategy()),
            keras2_idioms.accepted(unsave=self.store.mark_local),
            keras2_idioms.recording_optimizers() as optimizers,
            graph_seeds.shared_random_states(self.random_states, mode),
            checkpoint_initializers.recording(self.checkpoint_initializers),
            v1_savers.recording(),
            object_restores.recording(),
            moving_average_names.recording(),
            variable_initializers.recording(),
        ):
            # As in 2.15, the model_fn's graph has RunConfig.tf_random_seed as
            # its seed (None when unset), whatever another Estimator set.
            graph = tf.compat.v1.get_default_graph()
            if not tf.executing_eagerly():
                graph.seed = getattr(self.config, "tf_random_seed", None)
            if self.building:
                self.model_fn_graph = graph
            first_op = len(graph.get_operations()) if not tf.executing_eagerly() else 0
            first_table = len(graph.get_collection(tf.compat.v1.GraphKeys.TABLE_INITIALIZERS))
            try:
                with self.store.tables.sharing():
                    spec = self.model_fn(
                        **{k: v for k, v in candidates.items() if k in self._accepted}
                    )
            except AttributeError as err:
                _raise_with_a_keras_3_fix(err)
                raise
            except TypeError as err:
                _raise_for_an_initializer_op(err)
                raise
            if mode == ModeKeys.TRAIN and isinstance(spec, EstimatorSpec):
                if self.shared is not None and not tf.executing_eagerly():
                    self.shared.windows.add(graph, first_op, spec)
                summaries.collect_loss(spec.loss)
                if not tf.executing_eagerly():
                    _fetches.note_reads_before_updates(graph, first_op)
            if recording and isinstance(spec, EstimatorSpec):
                summaries.write_collected()
            if not tf.executing_eagerly():
                _initialize_tables(graph, first_table)
        if not isinstance(spec, EstimatorSpec):
            _raise_not_a_spec(spec)
        summaries.note_session_scaffold(spec.scaffold)
        if self.shared is not None:
            self.shared.spec = spec
        if spec.mode is None:
            # As in 2.15, a spec may leave the mode out (a model_fn without
            # `mode` cannot know it); it is checked for the mode it ran in.
            spec = spec._with_mode(mode)
        if self.building:
            self._record(spec, mode)
            self.optimizers[mode] = tuple(optimizers)
        else:
            is_chief = getattr(self.config, "is_chief", True)
            _share_hook_state(self.spec_hooks.get(mode, ()), _spec_hooks(spec, mode, is_chief))
        if mode == ModeKeys.TRAIN and not tf.executing_eagerly() and self.shared is None:
            # A shared step leaves them out unless fetched (`unfetched_ops`).
            _refuse_checkpoint_io(graph, first_op)
        if (not self.building or self.store.create_at_once) and mode == ModeKeys.TRAIN:
            # The building trace's Checkpoint holds stand-ins; a step's holds
            # the variables training updates.
            checkpoint = getattr(spec.scaffold, "saver", None)
            if is_object_checkpoint(checkpoint):
                self.store.use_checkpoint(checkpoint)
        # As in 2.15, a spec of another mode runs with the fields this mode
        # uses; what 2.15 then failed on is refused with its error.
        check_runs_in(spec, mode)
        return spec

    def _record(self, spec: EstimatorSpec, mode: str) -> None:
        """What a building trace keeps of the spec."""
        _check_scaffold(spec.scaffold)
        init_op = _assigning_init_op(spec.scaffold)
        if init_op is not None:
            _check_init_op_runs_alone(init_op, mode, shared=self.shared is not None)
            self.scaffold_init_ops[mode] = init_op
        else:
            self.scaffold_init_ops.pop(mode, None)
        self.scaffold_summary_ops[mode] = getattr(spec.scaffold, "summary_op", None)
        saver = getattr(spec.scaffold, "saver", None)
        self.scaffold_checkpoints[mode] = saver if is_object_checkpoint(saver) else None
        if v1_savers.is_v1_saver(saver):
            self.scaffold_savers[mode] = _v1_saver_settings(saver, mode)
        else:
            self.scaffold_savers.pop(mode, None)
        if getattr(spec.scaffold, "init_fn", None) is not None:
            self.scaffold_init_fns[mode] = spec.scaffold
        else:
            self.scaffold_init_fns.pop(mode, None)
        is_chief = getattr(self.config, "is_chief", True)
        self.spec_hooks[mode] = _spec_hooks(spec, mode, is_chief)
        self.chief_hook_counts[mode] = (
            len(spec.training_chief_hooks or ())
            if mode == ModeKeys.TRAIN and is_chief
            else 0
        )
        if spec.loss is not None and hasattr(spec.loss, "name"):
            self.loss_names[mode] = spec.loss.name
        # Keras metrics are evaluation state, not model state: keep them
        # out of checkpoints, as TF1 metric variables were.
        for key, metric in (spec.eval_metric_ops or {}).items():
            # A Keras metric, or the (value, update_op) pair made of one.
            metric = getattr(metric, "metric", metric)
            if isinstance(metric, keras.metrics.Metric):
                self.store.mark_metric(key, metric)

    @contextlib.contextmanager
    def building_trace(self) -> Iterator[None]:
        """Marks the enclosed trace as a building trace (variables may be made)."""
        self.building = True
        try:
            yield
        finally:
            self.building = False

    @contextlib.contextmanager
    def tracing_fetches(self, plan: _fetches.FetchPlan) -> Iterator[None]:
        """Makes the step traced meanwhile return what `plan` fetches."""
        self.fetching = plan
        try:
            yield
        finally:
            self.fetching = None

    @contextlib.contextmanager
    def tracing_shared(self) -> Iterator[SharedTrace]:
        """Marks the enclosed trace as a *shared* step (`StepFunctions`).

        One trace of the step serves the fused loop and every fetching step
        of its input structure: in training it records the summaries
        through a writer each function feeds (`summaries.FedWriter`: they
        run only when hooks ask, in the directories they name) and what a
        fetch of a variable's value from before the step reads.
        """
        self.shared = SharedTrace()
        try:
            yield self.shared
        finally:
            self.shared = None

    def adopt_variables(self, mode: str, element_spec: Any) -> None:
        """Takes into the store the variables a stateful model_fn made itself.

        A model_fn object that owns a built Keras model (`KerasModelFn`) has
        its variables before any trace; it lists them by checkpoint name.
        """
        provide = getattr(self.model_fn, "variables_before_trace", None)
        if provide is None:
            return
        for name, (variable, is_local) in provide(mode, element_spec).items():
            self.store.adopt(name, variable, is_local)

    def owned_variables(self, mode: str) -> dict[str, tf.Variable]:
        """The checkpointed variables a stateful model_fn made itself, by name.

        Empty for a plain model_fn; a `KerasModelFn` lists its Keras model's
        weights (without its metrics' running state).
        """
        provide = getattr(self.model_fn, "variables_before_trace", None)
        if provide is None:
            return {}
        return {
            name: variable
            for name, (variable, is_local) in provide(mode, None).items()
            if not is_local
        }

    def call_with_store(
        self,
        features: Any,
        labels: Any,
        mode: str,
        store: VariableStore,
        allow_creation: bool,
    ) -> EstimatorSpec:
        """Calls the model_fn on `store`'s variables, recording nothing here.

        An export traces the model_fn against a store of its own, restored
        from the exported checkpoint, so the variables the Estimator trains
        and predicts with, and what it recorded per mode (hooks, loss
        names), are untouched.

        Args:
            features: passed to model_fn.
            labels: passed to model_fn (None when serving).
            mode: the mode to call model_fn in.
            store: the variable store the call takes its variables from.
            allow_creation: whether `store` may create variables (as in a
                building trace; call `store.materialize()` afterwards).

        Returns:
            The validated EstimatorSpec.
        """
        saved_hooks = dict(self.spec_hooks)
        saved_chief_counts = dict(self.chief_hook_counts)
        saved_loss_names = dict(self.loss_names)
        saved_store, saved_building = self.store, self.building
        self.store, self.building = store, allow_creation
        # A SavedModel's random ops keep their own kernels, as 2.15's did.
        saved_states, self.random_states = self.random_states, None
        try:
            return self.call(features, labels, mode)
        finally:
            self.store, self.building = saved_store, saved_building
            self.random_states = saved_states
            self.spec_hooks.clear()
            self.spec_hooks.update(saved_hooks)
            self.chief_hook_counts.clear()
            self.chief_hook_counts.update(saved_chief_counts)
            self.loss_names.clear()
            self.loss_names.update(saved_loss_names)


# Scaffold's public properties, each the constructor argument as given.
class SharedTrace:
    """What a shared step's trace records besides its outputs.

    Attributes:
        read_before: variable name -> its read from before the step (what a
            hook fetching the global step gets).
        spec: the EstimatorSpec the model_fn returned.
        windows: where the model_fn's TRAIN calls put their ops, and what
            their specs make run (`unfetched_ops`).
    """

    def __init__(self) -> None:
        self.read_before: dict[str, tf.Tensor] = {}
        self.spec: EstimatorSpec | None = None
        self.windows = unfetched_ops.Windows()


_SCAFFOLD_FIELDS = (
    "init_feed_dict",
    "saver",
)


def _check_scaffold(scaffold: Any) -> Any:
    """The Scaffold's `tf.train.Checkpoint` saver, or None.

    Accepts a `local_init_op` that only initializes variables and tables
    (`local_variables_initializer()` and the like; variables are initialized
    before the first step, as 2.15's initializers ran), any `init_op` (one
    that does more is run on a fresh start: `_assigning_init_op`), and any
    `ready_op` or `ready_for_local_init_op` (every variable is ready here).
    Rejects the rest of the TF1 session machinery a Scaffold held (and any
    other saver).
    """
    if scaffold is None:
        return None
    saver = getattr(scaffold, "saver", None)
    checkpoint = saver if is_object_checkpoint(saver) else None
    op = getattr(scaffold, "local_init_op", None)
    if op is not None and not variable_initializers.only_initializes(op):
        raise ValueError(
            f"EstimatorSpec(scaffold=...) sets local_init_op={op!r}, which runs more "
            "than variables' and tables' initializers; a TF1 Session ran it each time "
            "it started, and this Estimator has no Session. Local variables start "
            "from their initializers (local_variables_initializer() and "
            "tables_initializer() are accepted there); to start from other values, "
            "assign them in the Scaffold's init_op or init_fn, or pass "
            "Estimator(warm_start_from=...)."
        )
    used = [
        f
        for f in _SCAFFOLD_FIELDS
        if getattr(scaffold, f, None) is not None
        and not (f == "saver" and (checkpoint is not None or v1_savers.is_v1_saver(saver)))
    ]
    if used:
        raise ValueError(
            f"EstimatorSpec(scaffold=...) sets {used}, which need a TF1 Session "
            "and do not exist in TF2. Initialise from a checkpoint with "
            "Estimator(warm_start_from=...); summaries and checkpoints are "
            "configured with RunConfig, and a tf.train.Checkpoint as the "
            "Scaffold's saver makes them object-based."
        )
    return checkpoint


def _assigning_init_op(scaffold: Any) -> Any:
    """The Scaffold's `init_op` when it does more than initialize; else None."""
    op = getattr(scaffold, "init_op", None)
    if op is None or variable_initializers.only_initializes(op):
        return None
    return op


def _check_init_op_runs_alone(op: Any, mode: str, shared: bool) -> None:
    """Refuses an `init_op` of its own where it would run with the steps.

    It runs once, on a fresh start, where 2.15's session creation ran it
    (`Estimator._sync`). That needs a graph whose steps run only what they
    fetch (evaluation and prediction, and a training step cut out of one
    shared trace) and the variables themselves captured in it (no
    distribution strategy, whose replicas each hold a copy).
    """
    if tf.distribute.has_strategy():
        where = f"under {type(tf.distribute.get_strategy()).__name__}"
    elif mode == ModeKeys.TRAIN and not shared:
        where = "in a training step that runs every op the model_fn builds"
    else:
        return
    raise ValueError(
        f"EstimatorSpec(scaffold=...) sets init_op={op!r}, which runs more than "
        f"variables' and tables' initializers; a TF1 Session ran it once before the "
        f"first step, which cannot be done {where}. Variables start from their "
        "initializers (global_variables_initializer() and tables_initializer() are "
        "accepted there); to start from other values, restore them in a "
        "Scaffold(init_fn=lambda scaffold, session: ...) or pass "
        "Estimator(warm_start_from=...)."
    )


def _v1_saver_settings(saver: Any, mode: str) -> v1_savers.SaverSettings:
    """The Scaffold's TF1 Saver's settings, as the Estimator uses them in `mode`.

    In evaluation, prediction and export the Saver's keys say where each
    variable is read from (a moving average's, say), as 2.15 restored
    through it. A training Saver sets model_dir's retention; its checkpoints
    hold every variable under its own name, so one that renames variables
    is refused.
    """
    found = v1_savers.settings(saver)
    renamed = found.renamed()
    if mode == ModeKeys.TRAIN and renamed:
        raise ValueError(
            "The TRAIN EstimatorSpec's Scaffold saver writes variables under "
            f"other checkpoint keys ({renamed}, variable name -> key); training "
            "writes model_dir's checkpoints with each variable under its own "
            "name. Leave var_list out of the training Saver (its max_to_keep "
            "and keep_checkpoint_every_n_hours are kept), or give the renaming "
            "Saver in EVAL or PREDICT mode only, where it says what is read."
        )
    return found


def _spec_hooks(spec: EstimatorSpec, mode: str, is_chief: bool) -> tuple[Any, ...]:
    if mode == ModeKeys.TRAIN:
        # As in tf.estimator, other workers of a cluster skip the chief's hooks.
        chief_hooks = tuple(spec.training_chief_hooks or ()) if is_chief else ()
        return chief_hooks + tuple(spec.training_hooks or ())
    if mode == ModeKeys.EVAL:
        return tuple(spec.evaluation_hooks or ())
    return tuple(spec.prediction_hooks or ())


def _share_hook_state(running: tuple[Any, ...], later: tuple[Any, ...]) -> None:
    """Gives the hooks of a later trace the state of the hooks the loop runs.

    The loop runs the hooks the building trace's EstimatorSpec returned; every
    later trace of the mode calls the model_fn again, which makes new hook
    objects. A program that keeps the last one it made (to read
    `FinalOpsHook.final_ops_values` after `train()`, say) expects the hook
    that ran, as tf.estimator called the model_fn once per call. So each later
    hook of the same class at the same place shares its attributes with the
    running one.
    """
    for mine, theirs in zip(running, later, strict=False):
        if mine is theirs or type(mine) is not type(theirs):
            continue
        shared = getattr(mine, "__dict__", None)
        if shared is not None and hasattr(theirs, "__dict__"):
            theirs.__dict__ = shared


_KERAS_3_ONLY = "is not available with Keras 3."


def _raise_with_a_keras_3_fix(err: AttributeError) -> None:
    """Adds the fix to TensorFlow's error for a TF1 Keras name (tf.compat.v1.layers.X).

    TensorFlow 2.21 says only that the name "is not available with Keras 3";
    the model_fn of a program that changed just its import meets this first.
    """
    message = str(err)
    if not message.endswith(_KERAS_3_ONLY):
        return
    raise AttributeError(
        f"{message} In a model_fn, use keras_estimator.compat.layers in place "
        "of tf.compat.v1.layers (the same functions, with TF1 variable "
        "names), or call keras_estimator.install() (or run the program with "
        "`keras-estimator run`), which serves tf.compat.v1.layers itself."
    ) from err


# Ops that read or write checkpoint files. A TF1 graph ran them only when
# asked: a Saver's save() or restore(). (`init_from_checkpoint` builds none
# here: `checkpoint_initializers` records its restores.)
_CHECKPOINT_READS = frozenset({"RestoreV2", "Restore", "RestoreSlice"})
_CHECKPOINT_WRITES = frozenset({"SaveV2", "Save", "SaveSlices", "MergeV2Checkpoints"})


def _refuse_checkpoint_io(graph: tf.Graph, first_op: int) -> None:
    """Refuses checkpoint reads and writes the model_fn built for training.

    Called for a step that is not cut out of one shared trace
    (`unfetched_ops`): such a step runs every stateful op of the model_fn's
    TRAIN graph, on every step (docs/differences.md). An op restoring
    variables from a checkpoint would then put the checkpoint's values back
    at every step, undoing the training, and a save op would write a file
    at every step.
    """
    for op in graph.get_operations()[first_op:]:
        if op.type not in _CHECKPOINT_READS and op.type not in _CHECKPOINT_WRITES:
            continue
        kind = "reads" if op.type in _CHECKPOINT_READS else "writes"
        raise ValueError(
            f"The model_fn built an op that {kind} a checkpoint in TRAIN mode "
            f"({op.type} {op.name!r}), as a tf.train.Checkpoint restore builds. "
            "A TF1 session ran it only when fetched; this training step (under "
            "TPUStrategy, a ParameterServerStrategy with several replicas per worker, "
            "or with a tf.summary write under the model_fn's own record_if) runs "
            "every op the model_fn builds, so it would run at every step and undo "
            "the training. "
            "To start from a checkpoint, remove the call and pass "
            "Estimator(warm_start_from=tf.estimator.WarmStartSettings("
            "ckpt_to_initialize_from=<checkpoint>, vars_to_warm_start=<regex>, "
            "var_name_to_prev_var_name=<the assignment map>)); the Estimator writes "
            "model_dir's checkpoints itself (RunConfig(keep_checkpoint_max=...))."
        )


def _raise_for_an_initializer_op(err: TypeError) -> None:
    """Explains TensorFlow's error for an op grouping variables' initializers.

    A TF1 model_fn builds `Scaffold(init_op=tf.compat.v1.global_variables_initializer())`
    or `tf.group(w.initializer, ...)`; here variables are made once, outside
    the traced graph, and have no initializer op, so `tf.group` meets None
    and raises a TypeError that names neither the op nor the fix.
    """
    if "Received 'None'" not in str(err):
        return
    if not any(
        frame.name == "variables_initializer" or ".initializer" in _source(frame)
        for frame in traceback.extract_tb(err.__traceback__)
    ):
        return
    raise ValueError(
        "A variable initializer op cannot be built in a model_fn here: "
        "tf.compat.v1.global_variables_initializer() and a variable's "
        "`.initializer` are for Scaffold(init_op=...), which needs a TF1 "
        "Session and is not supported (variables are initialised once, when "
        "made, and have no initializer op: tf.group received None). Remove the "
        "initializer op and the Scaffold's init_op: variables start from their "
        "initializers, or from a checkpoint with Estimator(warm_start_from=...)."
    ) from err


def _source(frame: traceback.FrameSummary) -> str:
    """The whole statement a traceback frame ran (`frame.line` is its first line)."""
    last = getattr(frame, "end_lineno", None) or frame.lineno or 0
    first = frame.lineno or 0
    return "".join(linecache.getline(frame.filename, n) for n in range(first, last + 1))


def _raise_not_a_spec(spec: Any) -> None:
    text = repr(spec)
    raise ValueError(
        f"model_fn should return an EstimatorSpec, got {type(spec).__name__} "
        f"({text[:100]}). Return keras_estimator.EstimatorSpec(mode=mode, ...)."
    )
