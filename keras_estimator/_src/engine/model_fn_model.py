"""A model_fn wrapped as a `keras.Model`: the unit Keras' trainer runs.

`train_step`, `test_step` and `predict_step` each call the model_fn in the
matching mode (through `ModelFnTrace`, inside the variable store's scope), so
Keras' `fit`, `evaluate` and `predict` drive a TF1-style model_fn. The model
owns its train, test and predict functions (built by `StepFunctions`): each
call of the train or test function runs a *variable* number of steps in one
compiled `tf.while_loop`, as many as the `RunState` of the call under way
allows; plain Keras use falls back to `steps_per_execution`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.base.estimator_spec import EstimatorSpec, check_metric_keys
from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.engine import fetched_only as _fetched_only
from keras_estimator._src.engine import fetches as _fetches
from keras_estimator._src.engine import input_release as _input_release
from keras_estimator._src.engine import inputs
from keras_estimator._src.engine import loop as _loop
from keras_estimator._src.engine.callback_model import ModelFnView, OptimizerView
from keras_estimator._src.engine.fused_loop import (
    GLOBAL_STEP_KEY,
    LOSS_KEY,
)
from keras_estimator._src.engine.model_fn_trace import ModelFnTrace
from keras_estimator._src.engine.prediction_keys import PredictionKeys
from keras_estimator._src.engine.run_plan import RunState
from keras_estimator._src.engine.step_functions import (
    FETCHES_KEY,
    StepFunctions,
    shares_one_trace,
)
from keras_estimator._src.engine.variable_store import VariableStore, as_tf_variable
from keras_estimator._src.engine.whole_evaluation import (
    SingleThreadRefused,
    WholeEvaluation,
)
from keras_estimator._src.tf_internals import keras_trainer


@dataclasses.dataclass
class _BuiltState:
    """What the building traces leave the model: logs structures, graphs, the callbacks' view.

    A plain object, which Keras' attribute tracking leaves as it is: held
    in the model directly, the dicts would become tracked wrappers and the
    view a sub-layer whose variables the model would list as its own.
    """

    logs_specs: dict[str, Any] = dataclasses.field(default_factory=dict)
    build_graphs: dict[str, Any] = dataclasses.field(default_factory=dict)
    # Mode -> the loop input's element spec its steps were built for, where
    # it is not one replica's (a distributed dataset's).
    loop_specs: dict[str, Any] = dataclasses.field(default_factory=dict)
    view: ModelFnView | None = None
    prediction_keys: PredictionKeys = dataclasses.field(default_factory=PredictionKeys)


class ModelFnModel(keras.Model):
    """Runs `model_fn(features, labels, mode, params, config)` as a Keras model.

    Args:
        model_fn: the user's model function.
        model_fn_args: the parameter names `model_fn` accepts.
        params: passed to model_fn as `params`.
        config: passed to model_fn as `config` (a `RunConfig`).
        store: the variable store shared by every mode.
    """

    def __init__(
        self,
        model_fn: Callable[..., Any],
        model_fn_args: tuple[str, ...],
        params: dict[str, Any],
        config: Any,
        store: VariableStore,
    ) -> None:
        super().__init__(name="model_fn_model")
        self._trace = ModelFnTrace(model_fn, model_fn_args, params, config, store)
        self._steps = StepFunctions(self, self._trace)
        self._store = store
        self._built_modes: dict[str, Any] = {}
        self._eval_loss = keras.metrics.Mean(name="loss")
        # The call under way (an idle state between calls); see `running`.
        self._run = RunState()
        self._built_state = _BuiltState()
        self._whole_evaluation = WholeEvaluation()
        self.built = True

    # Each mode is built by `build_mode`: Keras' own build at the start of
    # fit/evaluate has nothing to do, and fails under MultiWorkerMirrored.
    _maybe_symbolic_build = keras_trainer.skip_symbolic_build

    def keep_epoch_iterator(self, epoch_iterator: Any) -> None:
        """Keeps the Keras epoch iterator of a starting fit/evaluate call."""
        self._run.epoch_iterators.append(epoch_iterator)

    @contextlib.contextmanager
    def reading_input(self) -> Iterator[None]:
        """The extent of one fit/evaluate call; frees the input it read on exit.

        Keras' epoch iterator and its generator refer to each other, which
        would keep the tf.data iterator until some garbage collection, in
        whatever thread runs it, and destroying it can wait long (see
        `input_release`). On exit the cycle is broken, leaving the model's
        box as the iterator's only holder, and the box goes to the release
        thread. Calls nest (an evaluation during training): each frees only
        its own input.
        """
        outer = self._run.input_box, self._run.epoch_iterators
        self._run.input_box, self._run.epoch_iterators = [], []
        try:
            yield
        finally:
            for epoch_iterator in self._run.epoch_iterators:
                keras_trainer.end_epoch_iteration(epoch_iterator)
            _input_release.release(self._run.input_box)
            self._run.input_box, self._run.epoch_iterators = outer

    def hold_input(self, iterator: Any) -> None:
        """Makes `iterator` the input the current call reads (see `reading_input`)."""
        box = self._run.input_box
        if box and box[0] is iterator:
            return
        if box:  # an earlier call's input that no loop released
            _input_release.release(box)
        self._run.input_box = [iterator]

    @contextlib.contextmanager
    def running(self, run: RunState) -> Iterator[RunState]:
        """Runs the enclosed fit/evaluate/predict call under `run`, the loop's state of it.

        Calls nest (an evaluation during training): the outer call's state is
        back when the inner call ends.
        """
        outer = self._run
        self._run = run
        try:
            yield run
        finally:
            self._run = outer

    @property
    def run_state(self) -> RunState:
        """The state of the call under way (an idle one between calls)."""
        return self._run

    def fetch_once(self, plan: _fetches.FetchPlan) -> dict[str, Any] | None:
        """What `plan` fetches, on the training input's next batch, training nothing.

        tf.estimator's hooks could `session.run(fetches)` in `end()` (as
        `FinalOpsHook` does), which ran the TRAIN graph once more on the next
        batch without its train_op. Returns None when no training input is
        being read or it has ended.
        """
        box = self._run.input_box
        if not box or ModeKeys.TRAIN not in self._built_modes:
            return None
        return self._steps.fetch_once(plan, box[0])

    def can_fetch_once(self) -> bool:
        """Whether `fetch_once` can run here (not on a parameter-server cluster)."""
        strategy = self.distribute_strategy
        return not isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy)

    def store_variable(self, name: str) -> tf.Variable | None:
        """The store's variable named `name` (the one training updates)."""
        return self._store.get(name)

    @property
    def logs_specs(self) -> dict[str, Any]:
        """Mode -> the structure of one step's logs (from its building trace)."""
        return self._built_state.logs_specs

    @property
    def spec_hooks(self) -> dict[str, tuple[Any, ...]]:
        """Mode -> the hooks its EstimatorSpec returned."""
        return self._trace.spec_hooks

    @property
    def chief_hook_counts(self) -> dict[str, int]:
        """Mode -> how many of its `spec_hooks` are training_chief_hooks (first)."""
        return self._trace.chief_hook_counts

    @property
    def loss_names(self) -> dict[str, str]:
        """Mode -> the graph name of its loss tensor."""
        return self._trace.loss_names

    @property
    def scaffold_summary_ops(self) -> dict[str, Any]:
        """Mode -> its EstimatorSpec Scaffold's summary_op, where one was set."""
        return self._trace.scaffold_summary_ops

    @property
    def build_graphs(self) -> dict[str, Any]:
        """Mode -> the graph of its building trace (what hooks' begin() sees)."""
        return self._built_state.build_graphs

    def callback_model(self) -> keras.Model:
        """The Keras model the user's callbacks see (`user_callbacks`).

        A model_fn object that holds a Keras model (`keras_model_fn`'s)
        names it as `callback_model`; any other model_fn is seen through a
        `ModelFnView` of its variables, made once.
        """
        keras_model = getattr(self._trace.model_fn, "callback_model", None)
        if isinstance(keras_model, keras.Model):
            return keras_model
        if self._built_state.view is None:
            optimizers = self._trace.optimizers.get(ModeKeys.TRAIN, ())
            optimizer = None
            if len(optimizers) == 1:
                optimizer = OptimizerView(
                    optimizers[0], self._store.get, self._store.global_step()
                )
            self._built_state.view = ModelFnView(self._store.saveable, optimizer)
        return self._built_state.view

    def finalize_variable_values(self) -> None:
        """What Keras' `fit` does at the end: a model_fn's `finalize_variable_values`.

        `keras_model_fn`'s calls its optimizer's (EMA weights swapped in).
        """
        finalize = getattr(self._trace.model_fn, "finalize_variable_values", None)
        if finalize is not None:
            finalize()

    # ---- calling the model_fn -----------------------------------------------
    @property
    def trace(self) -> ModelFnTrace:
        """What calls the model_fn (export traces the serving graph with it)."""
        return self._trace

    def call_model_fn(
        self,
        features: Any,
        labels: Any,
        mode: str,
        summary_step: tf.Tensor | None = None,
    ) -> EstimatorSpec:
        """Calls the model_fn in `mode` in the trace under way (`ModelFnTrace.call`)."""
        return self._trace.call(features, labels, mode, summary_step)

    def build_mode(self, mode: str, element_spec: Any, loop_spec: Any = None) -> None:
        """Traces `mode`'s step once so its variables exist before any step.

        On one machine and on each worker of a `MultiWorkerMirroredStrategy`
        this is the trace the mode's steps run (`_build_in_step`): the
        model_fn is called once per replica, as tf.estimator called it once
        per replica per call. Elsewhere (a parameter-server chief) a
        building trace of its own creates the variables first, keeping every
        compiled function free of variable creation.

        Args:
            mode: the mode to build.
            element_spec: the spec of one replica's input element.
            loop_spec: the spec of the loop's input element (a distributed
                dataset's: one value per replica), which the steps are
                traced for; None: `element_spec`.
        """
        if self._built_modes.get(mode) == element_spec:
            return
        # Features of other dtypes than training's are traced as given, as
        # tf.estimator built a new graph for each call: feature columns cast
        # them; where a dtype cannot work, the model_fn's own error says so.
        trained = self._built_modes.get(ModeKeys.TRAIN) if mode != ModeKeys.TRAIN else None
        step = {
            ModeKeys.TRAIN: self.train_step,
            ModeKeys.EVAL: self.test_step,
            ModeKeys.PREDICT: self.predict_step,
        }[mode]
        self._store.global_step()
        self._trace.adopt_variables(mode, element_spec)
        try:
            if self._build_in_step(mode, element_spec if loop_spec is None else loop_spec):
                self._built_modes[mode] = element_spec
                if loop_spec is not None and loop_spec != element_spec:
                    self._built_state.loop_specs[mode] = loop_spec
                return
            # wrap_function traces exactly once (tf.function may trace twice
            # when variables are created) and runs nothing.
            with self._trace.building_trace():
                traced = tf.compat.v1.wrap_function(step, signature=[element_spec])
        except KeyError as error:
            if trained is not None:
                inputs.raise_if_feature_missing(error, trained, element_spec, mode)
            raise
        self._store.materialize()
        self.build_graphs[mode] = traced.graph
        self._built_modes[mode] = element_spec
        self.logs_specs[mode] = tf.nest.map_structure(
            lambda t: tf.TensorSpec(t.shape, t.dtype), traced.structured_outputs
        )

    def _build_in_step(self, mode: str, element_spec: Any) -> bool:
        """Builds `mode` in the trace its steps run, where steps share one.

        On one machine (and on each worker of a multi-worker cluster) the
        step's trace, made now for the loop's input
        (`element_spec`), creates the variables itself (at once, outside the
        trace; under a strategy the first replica creates them, in the
        strategy's scope), so each replica calls the model_fn once.
        """
        strategy = self.distribute_strategy
        # A model made outside the store's strategy (evaluating as tf.estimator
        # did without eval_distribute, or a parameter-server chief's local
        # evaluation and prediction) traces its steps with none.
        outside = self._store.strategy is not None and not tf.distribute.has_strategy()
        if (
            self._store.strategy not in (None, strategy)
            and not (outside and strategy is tf.distribute.get_strategy())
            or (tf.distribute.has_strategy() and tf.distribute.get_strategy() is not strategy)
            or not shares_one_trace(strategy)
        ):
            # Elsewhere (a parameter-server chief) each function traces the
            # step itself, where variables cannot be created: a building
            # trace of its own makes them first.
            return False
        if mode == ModeKeys.TRAIN:
            self.make_train_function()
        elif mode == ModeKeys.EVAL:
            self.make_test_function()
        else:
            self.make_predict_function()
        kind = {ModeKeys.TRAIN: "train", ModeKeys.EVAL: "test"}.get(mode, "predict")
        self._store.create_at_once = True
        try:
            with self._trace.building_trace():
                built = self._steps.prebuild(kind, element_spec)
        finally:
            self._store.create_at_once = False
        if built is None:
            return False
        self.build_graphs[mode] = self._trace.model_fn_graph
        structure = built if mode == ModeKeys.PREDICT else built.logs_structure
        self.logs_specs[mode] = tf.nest.map_structure(
            lambda t: tf.TensorSpec(t.shape, t.dtype), structure
        )
        return True

    def shared_train_step(self, element_spec: Any) -> Any:
        """The training step's one trace for `element_spec` (`StepFunctions`' shared step).

        None where the steps do not share a trace. The TRAIN mode must be
        built (`build_mode`) first.
        """
        return self._steps.prebuild("train", element_spec)

    def shared_fetching_step(
        self, shared: Any, plan: _fetches.FetchPlan, summaries: bool
    ) -> Callable[[Any], dict[str, Any]] | None:
        """A step of `shared` that also returns what `plan` fetches (None: it cannot)."""
        return self._steps.shared_fetching(shared, plan, summaries)

    def reset_metrics(self) -> None:
        super().reset_metrics()
        reset = getattr(self._trace.model_fn, "reset_metrics", None)
        if reset is not None:
            reset()

    # ---- Keras fit ------------------------------------------------------------
    def fit(self, x: Any = None, y: Any = None, *args: Any, **kwargs: Any) -> Any:
        """Keras `fit`; a single epoch fuses steps as `Estimator.train` does.

        With `epochs=1` (the step-based use tf.estimator programs make), the
        call runs through the Estimator's loop: `steps_per_epoch` counts
        training steps, and steps that no callback or hook needs run fused in
        one compiled call. Other calls are plain Keras `fit`, one call per
        `steps_per_execution` steps.
        """
        epochs = kwargs.get("epochs", 1) - kwargs.get("initial_epoch", 0)
        if self.in_loop:
            return super().fit(x, y, *args, **kwargs)
        if args or y is not None or epochs != 1:
            with self.reading_input():
                return super().fit(x, y, *args, **kwargs)
        kwargs.pop("epochs", None)
        steps = kwargs.pop("steps_per_epoch", None)
        callbacks = list(kwargs.pop("callbacks", None) or [])
        start = int(self._store.global_step().numpy())
        state = RunState(start)
        last_step = start + steps if steps else None
        loop_callbacks = [_loop.StopAtStep(state, last_step), *callbacks]
        loop_length = getattr(self._trace.config, "steps_per_loop", None)
        return _loop.run_training(
            self, x, state, loop_callbacks, loop_length=loop_length, **kwargs
        )

    @property
    def in_loop(self) -> bool:
        """Whether a call of the loop (`engine.loop`) is under way on this model."""
        return self._run.in_loop

    def evaluate(self, x: Any = None, *args: Any, **kwargs: Any) -> Any:
        """Keras `evaluate`; the input it read is freed when it returns."""
        if self.in_loop:
            return super().evaluate(x, *args, **kwargs)
        with self.reading_input():
            return super().evaluate(x, *args, **kwargs)

    # ---- Keras steps ---------------------------------------------------------
    def train_step(self, data: Any) -> dict[str, tf.Tensor]:
        features, labels = inputs.split_element(data)
        global_step = self._store.global_step()
        # Under a scope of its own, so that the model_fn's ops get the names
        # they had in tf.estimator 2.15's graph ("Identity", "add"), where a
        # hook logging a list of tensors tags them.
        with tf.name_scope("global_step_before"):
            step_before = global_step.read_value()
            # Summaries are labelled with the step after this one, as
            # tf.estimator's SummarySaverHook labelled them (1, 6, 11, ...).
            summary_step = step_before + 1
        spec = self.call_model_fn(features, labels, ModeKeys.TRAIN, summary_step)
        with tf.control_dependencies(_as_dependencies(spec.train_op)):
            step_after = global_step.read_value()
        # A train_op that does not advance the global step (a Keras optimizer's
        # apply_gradients, say) would never reach max_steps: advance it here.
        # An add of 0 or 1 rather than a cond: a distributed variable's update
        # may not sit inside control flow, and the add is cheaper.
        missed = tf.cast(step_after <= step_before, global_step.dtype)
        step_after = global_step.assign_add(missed, read_value=True)
        logs = {LOSS_KEY: _scalar(spec.loss)}
        # A model_fn object may report what Keras' own fit would log.
        logs.update(getattr(self._trace.model_fn, "step_logs", None) or {})
        logs[GLOBAL_STEP_KEY] = step_after
        # A hook fetching the global step gets the value the step ran at, as
        # in a TF1 session run where the read did not wait for the train_op.
        return self._with_fetches(logs, {GLOBAL_STEP_KEY: step_before})

    def test_step(self, data: Any) -> dict[str, tf.Tensor]:
        features, labels = inputs.split_element(data)
        spec = self.call_model_fn(features, labels, ModeKeys.EVAL)
        check_metric_keys(spec.eval_metric_ops or {})
        loss = _scalar(spec.loss)
        # Evaluation steps run with TF1 semantics (`fetched_only`, applied in
        # `StepFunctions.fused_function`): the running mean is read after its update
        # only by explicit dependency.
        with _fetched_only.ops_created() as update:
            self._eval_loss.update_state(loss)
        logs: dict[str, tf.Tensor] = {}
        for name, metric in (spec.eval_metric_ops or {}).items():
            logs[name] = _metric_value(metric)
        with tf.control_dependencies(update):
            logs[LOSS_KEY] = tf.identity(self._eval_loss.result())
        return self._with_fetches(logs)

    def evaluation_state(self) -> list[tf.Variable]:
        """What an evaluation step updates: metric variables and the loss mean."""
        loss_mean = [as_tf_variable(v) for v in self._eval_loss.variables]
        return [*self._store.local_variables(), *(v for v in loss_mean if v is not None)]

    def _with_fetches(
        self, logs: dict[str, Any], read_before: dict[str, tf.Tensor] | None = None
    ) -> dict[str, Any]:
        """Adds what hooks asked for; `read_before` gives variables' earlier reads."""
        shared = self._trace.shared
        if shared is not None and read_before:
            shared.read_before.update(read_before)
        plan = self._trace.fetching
        if plan is not None:
            logs[FETCHES_KEY] = _fetches.resolve(
                plan.keys, plan.variables, self._store.get, read_before
            )
        return logs

    def predict_step(self, data: Any) -> Any:
        features, _ = inputs.split_element(data)
        spec = self.call_model_fn(features, None, ModeKeys.PREDICT)
        return self._built_state.prediction_keys.as_traceable(spec.predictions)

    def restore_prediction_keys(self, outputs: Any) -> Any:
        """One batch's predictions under the model_fn's keys (`prediction_keys`)."""
        return self._built_state.prediction_keys.restore(outputs)

    def final_metric_values(self, element_spec: Any) -> dict[str, Any]:
        """Each eval metric's value read after all updates (see `StepFunctions`).

        `element_spec` is one replica's; under a strategy whose evaluation
        step was built for the loop's input, the values are read from that
        step's trace.
        """
        loop_spec = self._built_state.loop_specs.get(ModeKeys.EVAL)
        if loop_spec is not None and self._built_modes.get(ModeKeys.EVAL) == element_spec:
            element_spec = loop_spec
        return self._steps.final_metric_values(element_spec)

    def evaluate_in_one_call(
        self, dataset: Any, steps: int | None
    ) -> tuple[dict[str, Any], int] | None:
        """Evaluates `dataset` in one compiled call per 1000 batches (`whole_evaluation`).

        Returns the logs with the final metric values, and the steps run;
        None, before reading any input, where the evaluation's loop is not
        shared (under a strategy), the input is not a `tf.data.Dataset`, or
        the model_fn resets metrics of its own: Keras' `evaluate` runs then.
        """
        if not isinstance(dataset, tf.data.Dataset):
            return None
        if getattr(self._trace.model_fn, "reset_metrics", None) is not None:
            return None
        self.make_test_function()
        loop_for = self._steps.evaluation_loop()
        if loop_for is None:
            return None
        whole = self._whole_evaluation
        shared = self._steps.prebuild("test", dataset.element_spec)
        if (
            shared is not None
            and inputs.is_small_input(dataset)
            and whole.fits_one_call(dataset, steps)
        ):
            # Its iterator is made in the call itself.
            loop = whole.loop(shared, lambda: self.logs_specs[ModeKeys.EVAL])
            values = self._steps.metric_values_function(dataset.element_spec)
            try:
                return whole.run(dataset, steps, loop, values, self.metrics)
            except SingleThreadRefused:
                # Some batches may have run: start again, the metrics reset.
                self._store.reset_local_variables()
        # The box holds the only reference to the iterator, freed on the
        # release thread (`input_release`).
        box = [inputs.make_iterator(dataset)]
        try:
            loop = (
                loop_for(box[0])
                if shared is None
                else self._whole_evaluation.loop(shared, lambda: self.logs_specs[ModeKeys.EVAL])
            )
            values = self._steps.metric_values_function(dataset.element_spec)
            try:
                return self._whole_evaluation.run(box[0], steps, loop, values, self.metrics)
            except SingleThreadRefused:
                # Some batches may have run: start again from a new iterator,
                # the metrics reset, on the default executor.
                _input_release.release(box)
                box = [inputs.make_iterator(dataset)]
                self._store.reset_local_variables()
                return self._whole_evaluation.run(box[0], steps, loop, values, self.metrics)
        finally:
            _input_release.release(box)

    def make_train_function(self, force: bool = False) -> Any:
        existing = getattr(self, "train_function", None)
        if existing is not None and not force:
            return existing
        self.train_function = self._steps.fused_function(self.train_step, "train")
        return self.train_function

    def make_test_function(self, force: bool = False) -> Any:
        existing = getattr(self, "test_function", None)
        if existing is not None and not force:
            return existing
        self.test_function = self._steps.fused_function(self.test_step, "test")
        return self.test_function
    def make_predict_function(self, force: bool = False) -> Any:
        existing = getattr(self, "predict_function", None)
        if existing is not None and not force:
            return existing
        self.predict_function = self._steps.predict_function()
        return self.predict_function


def _metric_value(metric: Any) -> tf.Tensor:
    """A metric's value for this step's logs (final values: `final_metric_values`)."""
    if isinstance(metric, keras.metrics.Metric):
        return metric.result()
    value_op, update_op = metric
    if tf.nest.is_nested(value_op):
        # A nested tuple of values, as 2.15 returned it.
        with tf.control_dependencies(_as_dependencies(update_op)):
            return tf.nest.map_structure(tf.identity, value_op)
    if (
        isinstance(update_op, tf.Tensor)
        and update_op.shape == value_op.shape
        and update_op.dtype == value_op.dtype
    ):
        # TF1 metrics return the updated value from their update op.
        return update_op
    with tf.control_dependencies(_as_dependencies(update_op)):
        return tf.identity(value_op)


def _as_dependencies(op: Any) -> list[Any]:
    if op is None:
        return []
    if isinstance(op, (tf.Tensor, tf.Operation)):
        return [op]
    if isinstance(op, tf.distribute.DistributedValues) and not isinstance(op, tf.Variable):
        # Per-replica results of an update made in cross-replica context.
        return [t for value in op.values for t in _as_dependencies(value)]
    # A variable (tf or Keras): depend on reading it after the update.
    return [tf.convert_to_tensor(op)]


def _scalar(loss: Any) -> tf.Tensor:
    loss = tf.convert_to_tensor(loss)
    return tf.reshape(tf.cast(loss, tf.float32), [])
