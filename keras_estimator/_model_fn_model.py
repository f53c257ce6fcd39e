"""A model_fn wrapped as a `keras.Model`: the unit Keras' trainer runs.

`train_step`, `test_step` and `predict_step` each call the model_fn in the
matching mode inside the variable store's scope, so Keras' `fit`, `evaluate`
and `predict` drive a TF1-style model_fn. The model owns its train and test
functions: each call runs a *variable* number of steps inside one compiled
`tf.while_loop` (the count is a tensor argument, so changing it never
retraces). The number comes from `step_plan`, which the loop sets from what its
hooks and callbacks need; plain Keras use falls back to `steps_per_execution`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import keras
import tensorflow as tf

from keras_estimator import _fetches, _inputs, _loop, _summaries
from keras_estimator._estimator_spec import EstimatorSpec
from keras_estimator._mode_keys import ModeKeys
from keras_estimator._variable_store import VariableStore

LOSS_KEY = "loss"
GLOBAL_STEP_KEY = "global_step"
FETCHES_KEY = "_hook_fetches"


class _FetchState:
    """Hook fetches: what the next run must return and what the last returned."""

    def __init__(self) -> None:
        self.request: _fetches.FetchPlan | None = None
        self.results: dict[str, Any] = {}
        self.tracing: _fetches.FetchPlan | None = None


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
        # Held in a tuple so Keras' attribute tracking leaves them untouched.
        self._call_info = (model_fn, model_fn_args, params, config)
        self._store = store
        self._built_modes: dict[str, Any] = {}
        self._building = False
        self._eval_loss = keras.metrics.Mean(name="loss")
        self._logs_specs: dict[str, Any] = {}
        self.executed_steps = 0
        self.last_run_steps = 0
        self.after_chunk: Callable[[dict[str, Any]], None] | None = None
        self.step_plan: Callable[[], int] | None = None
        self.fetches = _FetchState()
        self.spec_hooks: dict[str, tuple[Any, ...]] = {}
        self.build_graphs: dict[str, Any] = {}
        self.loss_names: dict[str, str] = {}
        self._fetching_functions: dict[Any, Any] = {}
        self._value_functions: dict[str, Any] = {}
        self.built = True

    # ---- calling the model_fn -----------------------------------------------
    def call_model_fn(
        self,
        features: Any,
        labels: Any,
        mode: str,
        summary_step: tf.Tensor | None = None,
    ) -> EstimatorSpec:
        """Traces the model_fn once in `mode`; returns its validated spec.

        In TRAIN mode, summaries are recorded when a hook asked for them
        (see `_summaries`), at `summary_step`.
        """
        model_fn, accepted, params, config = self._call_info
        candidates = {
            "features": features,
            "labels": labels,
            "mode": mode,
            "params": params,
            "config": config,
        }
        if "labels" in accepted and labels is None and mode == ModeKeys.TRAIN:
            raise ValueError(
                "model_fn takes `labels` but input_fn gave none in TRAIN mode: its "
                "dataset yields features only. Make input_fn return a dataset of "
                "(features, labels) tuples."
            )
        plan = self.fetches.tracing
        dirs = _summaries.summary_dirs(plan.keys) if plan and mode == ModeKeys.TRAIN else []
        step = summary_step if summary_step is not None else tf.constant(0, tf.int64)
        with (
            self._store.scope(allow_creation=self._building),
            _summaries.recording(dirs, step) as recording,
        ):
            spec = model_fn(**{k: v for k, v in candidates.items() if k in accepted})
            if recording and isinstance(spec, EstimatorSpec):
                _summaries.write_collected(spec.loss)
        if not isinstance(spec, EstimatorSpec):
            _raise_not_a_spec(spec)
        if self._building:
            _check_scaffold(spec.scaffold)
            self.spec_hooks[mode] = _spec_hooks(spec, mode)
            if spec.loss is not None and hasattr(spec.loss, "name"):
                self.loss_names[mode] = spec.loss.name
            # Keras metrics are evaluation state, not model state: keep them
            # out of checkpoints, as TF1 metric variables were.
            for metric in (spec.eval_metric_ops or {}).values():
                if isinstance(metric, keras.metrics.Metric):
                    self._store.mark_local(metric.variables)
        if spec.mode != mode:
            raise ValueError(
                f"model_fn was called in mode {mode!r} but returned an "
                f"EstimatorSpec for mode {spec.mode!r}. Pass the `mode` argument "
                "through to EstimatorSpec."
            )
        return spec

    def build_mode(self, mode: str, element_spec: Any) -> None:
        """Traces `mode`'s step once so its variables exist before any step.

        Creating variables in this separate trace (rather than inside the
        first compiled step) keeps every compiled function free of variable
        creation, which retraces and distribution strategies require.
        """
        if self._built_modes.get(mode) == element_spec:
            return
        step = {
            ModeKeys.TRAIN: self.train_step,
            ModeKeys.EVAL: self.test_step,
            ModeKeys.PREDICT: self.predict_step,
        }[mode]
        self._store.global_step()
        self._building = True
        try:
            # wrap_function traces exactly once (tf.function may trace twice
            # when variables are created) and runs nothing.
            traced = tf.compat.v1.wrap_function(step, signature=[element_spec])
        finally:
            self._building = False
        self._store.materialize()
        self.build_graphs[mode] = traced.graph
        self._built_modes[mode] = element_spec
        self._logs_specs[mode] = tf.nest.map_structure(
            lambda t: tf.TensorSpec(t.shape, t.dtype), traced.structured_outputs
        )

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
        if self.step_plan is not None or args or y is not None or epochs != 1:
            return super().fit(x, y, *args, **kwargs)
        kwargs.pop("epochs", None)
        steps = kwargs.pop("steps_per_epoch", None)
        callbacks = list(kwargs.pop("callbacks", None) or [])
        start = int(self._store.global_step().numpy())
        state = _loop.StepState(start)
        last_step = start + steps if steps else None
        loop_callbacks = [_loop.StopAtStep(state, last_step), *callbacks]
        return _loop.run_training(self, x, state, loop_callbacks, **kwargs)

    # ---- Keras steps ---------------------------------------------------------
    def train_step(self, data: Any) -> dict[str, tf.Tensor]:
        features, labels = _inputs.split_element(data)
        global_step = self._store.global_step()
        step_before = global_step.read_value()
        spec = self.call_model_fn(features, labels, ModeKeys.TRAIN, step_before)
        with tf.control_dependencies(_as_dependencies(spec.train_op)):
            step_after = global_step.read_value()
        # A train_op that does not advance the global step (a Keras optimizer's
        # apply_gradients, say) would never reach max_steps: advance it here.
        step_after = tf.cond(
            step_after > step_before,
            lambda: step_after,
            lambda: global_step.assign_add(1, read_value=True),
        )
        logs = {LOSS_KEY: _scalar(spec.loss), GLOBAL_STEP_KEY: step_after}
        return self._with_fetches(logs)

    def test_step(self, data: Any) -> dict[str, tf.Tensor]:
        features, labels = _inputs.split_element(data)
        spec = self.call_model_fn(features, labels, ModeKeys.EVAL)
        loss = _scalar(spec.loss)
        self._eval_loss.update_state(loss)
        logs: dict[str, tf.Tensor] = {}
        for name, metric in (spec.eval_metric_ops or {}).items():
            logs[name] = _metric_value(metric)
        logs[LOSS_KEY] = self._eval_loss.result()
        return self._with_fetches(logs)

    def _with_fetches(self, logs: dict[str, Any]) -> dict[str, Any]:
        plan = self.fetches.tracing
        if plan is not None:
            logs[FETCHES_KEY] = _fetches.resolve(
                plan.keys, plan.variables, self._store.get
            )
        return logs

    def predict_step(self, data: Any) -> Any:
        features, _ = _inputs.split_element(data)
        spec = self.call_model_fn(features, None, ModeKeys.PREDICT)
        return spec.predictions

    def final_metric_values(self, element_spec: Any) -> dict[str, Any]:
        """Each eval metric's value op, read after all updates (as TF1 did).

        The model_fn is traced once more in a TF1-style graph and pruned to the
        value ops, so running it reads the metric variables without running
        any update. Metrics whose value depends on the input (not on metric
        variables alone) keep the value of the last step.
        """
        key = repr(element_spec)
        function = self._value_functions.get(key)
        if function is None:
            function = self._make_value_function(element_spec)
            self._value_functions[key] = function
        if function is False:
            return {}
        return {name: value.numpy() for name, value in function().items()}

    def _make_value_function(self, element_spec: Any) -> Any:
        def metric_values(data: Any) -> dict[str, tf.Tensor]:
            features, labels = _inputs.split_element(data)
            spec = self.call_model_fn(features, labels, ModeKeys.EVAL)
            values = {}
            for name, metric in (spec.eval_metric_ops or {}).items():
                if isinstance(metric, keras.metrics.Metric):
                    values[name] = tf.convert_to_tensor(metric.result())
                else:
                    values[name] = tf.convert_to_tensor(metric[0])
            return values

        wrapped = tf.compat.v1.wrap_function(metric_values, signature=[element_spec])
        try:
            return wrapped.prune(feeds=[], fetches=wrapped.structured_outputs)
        except (ValueError, TypeError, tf.errors.InvalidArgumentError):
            return False

    # ---- compiled functions ------------------------------------------------
    def make_train_function(self, force: bool = False) -> Any:
        existing = getattr(self, "train_function", None)
        if existing is not None and not force:
            return existing
        self.train_function = self._make_fused_function(self.train_step, "train")
        return self.train_function

    def make_test_function(self, force: bool = False) -> Any:
        existing = getattr(self, "test_function", None)
        if existing is not None and not force:
            return existing
        self.test_function = self._make_fused_function(self.test_step, "test")
        return self.test_function

    def make_predict_function(self, force: bool = False) -> Any:
        existing = getattr(self, "predict_function", None)
        if existing is not None and not force:
            return existing
        strategy = self.distribute_strategy

        def one_batch(iterator: Any) -> Any:
            element = iterator.get_next_as_optional()
            spec = self._logs_specs[ModeKeys.PREDICT]

            def predict() -> Any:
                outputs = strategy.run(self.predict_step, args=(element.get_value(),))
                outputs = tf.nest.map_structure(
                    lambda v: _reduce_batch(strategy, v), outputs
                )
                return tf.experimental.Optional.from_value(outputs)

            return tf.cond(
                element.has_value(),
                predict,
                lambda: tf.experimental.Optional.empty(spec),
            )

        compiled = tf.function(one_batch, reduce_retracing=True, autograph=False)

        def function(iterator: Any) -> Any:
            if ModeKeys.PREDICT not in self._logs_specs:
                self.build_mode(ModeKeys.PREDICT, iterator.element_spec)
            outputs = compiled(iterator)
            if not outputs.has_value():
                raise StopIteration
            return outputs.get_value()

        self.predict_function = function
        return function

    def _run_fetching(
        self, one_step: Any, kind: str, iterator: Any, plan: _fetches.FetchPlan
    ) -> tuple[int, dict[str, Any]]:
        """Runs one step that also returns the values hooks asked for."""
        key = (
            kind,
            tuple(plan.keys),
            tuple(id(v) for v in plan.variables.values()),
            repr(iterator.element_spec),
        )
        # Concrete functions are called directly: this skips tf.function's
        # per-call signature matching, which costs as much as a small step.
        concrete = self._fetching_functions.get(key)
        if concrete is None:

            def step_with_fetches(iterator: Any) -> Any:
                self.fetches.tracing = plan
                try:
                    return one_step(iterator.get_next())
                finally:
                    self.fetches.tracing = None

            concrete = tf.function(
                step_with_fetches, autograph=False
            ).get_concrete_function(iterator)
            self._fetching_functions[key] = concrete
        try:
            outputs = dict(concrete(iterator))
        except tf.errors.OutOfRangeError:
            return 0, {}
        self.fetches.results = _fetches.to_numpy(outputs.pop(FETCHES_KEY))
        return 1, outputs

    def _planned_steps(self) -> int:
        if self.step_plan is None:
            return int(self.steps_per_execution)
        return int(self.step_plan())

    def _stop(self, kind: str) -> None:
        if kind == "train":
            self.stop_training = True
        else:
            self.stop_evaluating = True

    def _make_fused_function(
        self, step_fn: Callable[[Any], dict[str, tf.Tensor]], kind: str
    ) -> Callable[[Any], dict[str, Any]]:
        strategy = self.distribute_strategy
        mode = ModeKeys.TRAIN if kind == "train" else ModeKeys.EVAL

        def one_step(data: Any) -> dict[str, tf.Tensor]:
            outputs = strategy.run(step_fn, args=(data,))
            return tf.nest.map_structure(lambda v: _reduce(strategy, v), outputs)

        fused = _fused_runner(one_step, lambda: self._logs_specs[mode])
        last_logs: dict[str, Any] = {}

        def function(iterator: Any) -> dict[str, Any]:
            nonlocal last_logs
            if mode not in self._logs_specs:
                self.build_mode(mode, iterator.element_spec)
            planned = self._planned_steps()
            if planned <= 0:
                self.last_run_steps = 0
                self._stop(kind)
                return last_logs
            plan = self.fetches.request
            if plan is not None and plan.keys:
                planned = 1
                steps_run, logs = self._run_fetching(one_step, kind, iterator, plan)
            else:
                steps_run, logs = fused(iterator, tf.constant(planned, tf.int32))
            steps_run = int(steps_run)
            self.last_run_steps = steps_run
            self.executed_steps += steps_run
            if steps_run == 0:
                self._stop(kind)
                return last_logs
            last_logs = logs
            if self.after_chunk is not None:
                self.after_chunk(logs)
            if steps_run < planned or self._planned_steps() <= 0:
                self._stop(kind)
            return logs

        return function


def _fused_runner(
    one_step: Callable[[Any], dict[str, tf.Tensor]],
    logs_spec: Callable[[], dict[str, tf.TensorSpec]],
) -> Callable[[Any, tf.Tensor], tuple[tf.Tensor, dict[str, tf.Tensor]]]:
    """A compiled function running up to `num_steps` steps from an iterator.

    It stops early when the iterator is exhausted and returns how many steps
    ran with the last step's outputs. The next element is only fetched when
    another step will run, so no batch is lost between calls.
    """

    def run(iterator: Any, num_steps: tf.Tensor) -> Any:
        initial_logs = tf.nest.map_structure(
            lambda s: tf.zeros(s.shape, s.dtype), logs_spec()
        )

        def keep_going(count: tf.Tensor, logs: Any, element: Any) -> tf.Tensor:
            return tf.logical_and(count < num_steps, element.has_value())

        def step(count: tf.Tensor, logs: Any, element: Any) -> Any:
            logs = one_step(element.get_value())
            element = tf.cond(
                count + 1 < num_steps,
                iterator.get_next_as_optional,
                lambda: element,
            )
            return count + 1, logs, element

        count, logs, _ = tf.while_loop(
            keep_going,
            step,
            (tf.constant(0), initial_logs, iterator.get_next_as_optional()),
        )
        return count, logs

    return tf.function(run, reduce_retracing=True, autograph=False)


_SCAFFOLD_FIELDS = (
    "init_op",
    "init_feed_dict",
    "init_fn",
    "ready_op",
    "ready_for_local_init_op",
    "local_init_op",
    "summary_op",
    "saver",
)


def _check_scaffold(scaffold: Any) -> None:
    """Accepts an empty Scaffold; rejects the TF1 session machinery it held."""
    if scaffold is None:
        return
    used = [f for f in _SCAFFOLD_FIELDS if getattr(scaffold, f"_{f}", None) is not None]
    if used:
        raise ValueError(
            f"EstimatorSpec(scaffold=...) sets {used}, which need a TF1 Session "
            "and do not exist in TF2. Initialise from a checkpoint with "
            "Estimator(warm_start_from=...); savers and summaries are configured "
            "with RunConfig."
        )


def _spec_hooks(spec: EstimatorSpec, mode: str) -> tuple[Any, ...]:
    if mode == ModeKeys.TRAIN:
        return tuple(spec.training_chief_hooks or ()) + tuple(spec.training_hooks or ())
    if mode == ModeKeys.EVAL:
        return tuple(spec.evaluation_hooks or ())
    return tuple(spec.prediction_hooks or ())


def _metric_value(metric: Any) -> tf.Tensor:
    """A metric's value for this step's logs (final values: `final_metric_values`)."""
    if isinstance(metric, keras.metrics.Metric):
        return metric.result()
    value_op, update_op = metric
    if isinstance(update_op, tf.Tensor) and update_op.shape == value_op.shape:
        # TF1 metrics return the updated value from their update op.
        return update_op
    with tf.control_dependencies(_as_dependencies(update_op)):
        return tf.identity(value_op)


def _raise_not_a_spec(spec: Any) -> None:
    text = repr(spec)
    raise TypeError(
        f"model_fn must return an EstimatorSpec, got {type(spec).__name__} "
        f"({text[:100]}). Return keras_estimator.EstimatorSpec(mode=mode, ...)."
    )


def _as_dependencies(op: Any) -> list[Any]:
    if op is None:
        return []
    if isinstance(op, (tf.Tensor, tf.Operation)):
        return [op]
    # A variable (tf or Keras): depend on reading it after the update.
    return [tf.convert_to_tensor(op)]


def _scalar(loss: Any) -> tf.Tensor:
    loss = tf.convert_to_tensor(loss)
    return tf.reshape(tf.cast(loss, tf.float32), [])


def _reduce_batch(strategy: tf.distribute.Strategy, value: Any) -> Any:
    if strategy.num_replicas_in_sync == 1:
        return strategy.experimental_local_results(value)[0]
    return tf.concat(strategy.experimental_local_results(value), axis=0)


def _reduce(strategy: tf.distribute.Strategy, value: Any) -> Any:
    if strategy.num_replicas_in_sync == 1:
        return strategy.experimental_local_results(value)[0]
    if value.dtype.is_floating:
        return strategy.reduce(tf.distribute.ReduceOp.MEAN, value, axis=None)
    return strategy.experimental_local_results(value)[0]
