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

import contextlib
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.distribute import multi_worker
from keras_estimator._src.engine import fetched_only as _fetched_only
from keras_estimator._src.engine import fetches as _fetches
from keras_estimator._src.engine import fused_loop, inputs, step_call, tf_group
from keras_estimator._src.engine import input_release as _input_release
from keras_estimator._src.engine import loop as _loop
from keras_estimator._src.engine import summaries as _summaries
from keras_estimator._src.engine.fused_loop import (
    GLOBAL_STEP_KEY,
    LOSS_KEY,
    NAN_STEP_KEY,
)
from keras_estimator._src.engine.run_plan import RunPlan
from keras_estimator._src.engine.variable_store import (
    VariableStore,
    as_tf_variable,
    is_object_checkpoint,
)
from keras_estimator._src.tf_internals import private_api

FETCHES_KEY = "_hook_fetches"


class _RunState:
    """The current run plan, steps run and the input being read, off the model.

    Keras' attribute tracking would cost a step's worth on every update.
    `plan` is the `RunPlan` of the fit/evaluate/predict call under way (an
    idle one between calls); `tracing_fetches` the hooks' fetches while a
    fetching step is traced. `input_box` holds the only reference the model
    keeps to the tf.data iterator of the current fit/evaluate call, and
    `epoch_iterators` the Keras epoch iterators wrapping it (see
    `ModelFnModel.reading_input`).
    """

    def __init__(self) -> None:
        self.plan = RunPlan()
        self.tracing_fetches: _fetches.FetchPlan | None = None
        self.executed = 0
        self.input_box: list[Any] = []
        self.epoch_iterators: list[Any] = []


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
        self._run = _RunState()
        # The Estimator this model reads and writes checkpoints through, if
        # any (held in a tuple so Keras' attribute tracking leaves it alone).
        self._owner: tuple[Any, ...] = (None,)
        self.spec_hooks: dict[str, tuple[Any, ...]] = {}
        self.build_graphs: dict[str, Any] = {}
        self.loss_names: dict[str, str] = {}
        self._fetching_functions: dict[Any, Any] = {}
        self._last_spec_key: tuple[Any, str] = (None, "")
        self._value_functions: dict[str, Any] = {}
        self.built = True

    # Each mode is built by `build_mode`: Keras' own build at the start of
    # fit/evaluate has nothing to do, and fails under MultiWorkerMirrored.
    _maybe_symbolic_build = private_api.skip_symbolic_build

    def keep_epoch_iterator(self, epoch_iterator: Any) -> None:
        """Keeps the Keras epoch iterator of a starting fit/evaluate call."""
        self._run.epoch_iterators.append(epoch_iterator)

    @contextlib.contextmanager
    def reading_input(self) -> Iterator[None]:
        """The extent of one fit/evaluate call; frees the input it read on exit.

        Keras' epoch iterator and its generator refer to each other, which
        would keep the tf.data iterator until some garbage collection, in
        whatever thread runs it, and destroying it can wait long (see
        `_input_release`). On exit the cycle is broken, leaving the model's
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
                private_api.end_epoch_iteration(epoch_iterator)
            _input_release.release(self._run.input_box)
            self._run.input_box, self._run.epoch_iterators = outer

    def _hold_input(self, iterator: Any) -> None:
        box = self._run.input_box
        if box and box[0] is iterator:
            return
        if box:  # an earlier call's input that no loop released
            _input_release.release(box)
        self._run.input_box = [iterator]

    @contextlib.contextmanager
    def running(self, plan: RunPlan) -> Iterator[RunPlan]:
        """Runs the enclosed fit/evaluate/predict call under `plan`.

        Calls nest (an evaluation during training): the outer plan is back
        when the inner call ends.
        """
        outer = self._run.plan
        self._run.plan = plan
        try:
            yield plan
        finally:
            self._run.plan = outer

    @property
    def run_plan(self) -> RunPlan:
        """The plan of the call under way (an idle one between calls)."""
        return self._run.plan

    @contextlib.contextmanager
    def tracing_fetches(self, plan: _fetches.FetchPlan) -> Iterator[None]:
        """Makes the step traced meanwhile return what `plan` fetches."""
        self._run.tracing_fetches = plan
        try:
            yield
        finally:
            self._run.tracing_fetches = None

    @property
    def executed_steps(self) -> int:
        """Steps run by this model's train and test functions, in all."""
        return self._run.executed

    @property
    def nan_loss_step(self) -> int | None:
        """The global step of the current call's last run's first NaN loss."""
        return self._run.plan.nan_loss_step

    @property
    def last_run_steps(self) -> int:
        """Steps the current call's last run made (0: its input ended)."""
        return self._run.plan.last_run_steps

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
        plan = self._run.tracing_fetches
        dirs = _summaries.summary_dirs(plan.keys) if plan and mode == ModeKeys.TRAIN else []
        step = summary_step if summary_step is not None else tf.constant(0, tf.int64)
        with (
            self._store.scope(allow_creation=self._building),
            _summaries.recording(dirs, step) as recording,
            private_api.estimator_loss_scaling(tf.distribute.get_strategy()),
            tf_group.accept_keras_variables(),
        ):
            spec = model_fn(**{k: v for k, v in candidates.items() if k in accepted})
            if recording and isinstance(spec, EstimatorSpec):
                _summaries.write_collected(spec.loss)
        if not isinstance(spec, EstimatorSpec):
            _raise_not_a_spec(spec)
        if self._building:
            _check_scaffold(spec.scaffold)
            is_chief = getattr(config, "is_chief", True)
            self.spec_hooks[mode] = _spec_hooks(spec, mode, is_chief)
            if spec.loss is not None and hasattr(spec.loss, "name"):
                self.loss_names[mode] = spec.loss.name
            # Keras metrics are evaluation state, not model state: keep them
            # out of checkpoints, as TF1 metric variables were.
            for metric in (spec.eval_metric_ops or {}).values():
                if isinstance(metric, keras.metrics.Metric):
                    self._store.mark_local(metric.variables)
        elif mode == ModeKeys.TRAIN:
            # The building trace's Checkpoint holds stand-ins; a step's holds
            # the variables training updates.
            checkpoint = getattr(spec.scaffold, "_saver", None)
            if is_object_checkpoint(checkpoint):
                self._store.use_checkpoint(checkpoint)
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
        trained = self._built_modes.get(ModeKeys.TRAIN) if mode != ModeKeys.TRAIN else None
        if trained is not None:
            inputs.check_features_match(trained, element_spec, mode)
        step = {
            ModeKeys.TRAIN: self.train_step,
            ModeKeys.EVAL: self.test_step,
            ModeKeys.PREDICT: self.predict_step,
        }[mode]
        self._store.global_step()
        self._adopt_variables(mode, element_spec)
        self._building = True
        try:
            # wrap_function traces exactly once (tf.function may trace twice
            # when variables are created) and runs nothing.
            traced = tf.compat.v1.wrap_function(step, signature=[element_spec])
        except KeyError as error:
            if trained is not None:
                inputs.raise_if_feature_missing(error, trained, element_spec, mode)
            raise
        finally:
            self._building = False
        self._store.materialize()
        self.build_graphs[mode] = traced.graph
        self._built_modes[mode] = element_spec
        self._logs_specs[mode] = tf.nest.map_structure(
            lambda t: tf.TensorSpec(t.shape, t.dtype), traced.structured_outputs
        )

    def _adopt_variables(self, mode: str, element_spec: Any) -> None:
        """Takes into the store the variables a stateful model_fn made itself.

        A model_fn object that owns a built Keras model (`KerasModelFn`) has
        its variables before any trace; it lists them by checkpoint name.
        """
        provide = getattr(self._call_info[0], "variables_before_trace", None)
        if provide is None:
            return
        for name, (variable, is_local) in provide(mode, element_spec).items():
            self._store.adopt(name, variable, is_local)

    def reset_metrics(self) -> None:
        super().reset_metrics()
        reset = getattr(self._call_info[0], "reset_metrics", None)
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
        owner = self._owner[0]
        in_loop = self._run.plan.step_plan is not None
        if owner is not None and not in_loop:
            return self._fit_through(owner, x, y, args, epochs, kwargs)
        if in_loop:
            return super().fit(x, y, *args, **kwargs)
        if args or y is not None or epochs != 1:
            with self.reading_input():
                return super().fit(x, y, *args, **kwargs)
        kwargs.pop("epochs", None)
        steps = kwargs.pop("steps_per_epoch", None)
        callbacks = list(kwargs.pop("callbacks", None) or [])
        start = int(self._store.global_step().numpy())
        state = _loop.StepState(start)
        last_step = start + steps if steps else None
        loop_callbacks = [_loop.StopAtStep(state, last_step), *callbacks]
        loop_length = getattr(self._call_info[3], "steps_per_loop", None)
        return _loop.run_training(
            self, x, state, loop_callbacks, loop_length=loop_length, **kwargs
        )

    # ---- bound to an Estimator: model_fn_to_keras ----------------------------
    def bind_estimator(self, estimator: Any) -> None:
        """Routes fit/evaluate/predict through `estimator` and its model_dir."""
        self._owner = (estimator,)

    def _fit_through(
        self,
        owner: Any,
        x: Any,
        y: Any,
        args: tuple[Any, ...],
        epochs: int,
        kwargs: dict[str, Any],
    ) -> Any:
        unsupported = sorted(
            k for k in kwargs if k not in ("steps_per_epoch", "callbacks", "verbose", "epochs")
        )
        if y is not None or args or epochs != 1 or unsupported:
            raise ValueError(
                "A model_fn model trains the Estimator way: fit(dataset, "
                "steps_per_epoch=N, callbacks=[...]) runs N steps (or until the "
                "dataset ends) and saves checkpoints to model_dir per RunConfig. "
                f"Got y={y!r}, epochs={epochs}, extra arguments "
                f"{[*map(repr, args), *unsupported]}; put labels in the dataset "
                "and call fit once per run of steps."
            )
        owner.train(
            lambda: x,
            steps=kwargs.get("steps_per_epoch"),
            callbacks=kwargs.get("callbacks"),
        )
        return self.history

    def evaluate(self, x: Any = None, *args: Any, **kwargs: Any) -> Any:
        """Evaluates from model_dir's latest checkpoint when bound to an Estimator.

        Returns Keras' forms: a dict with `return_dict=True`, else the loss
        followed by the metrics in name order.
        """
        owner = self._owner[0]
        if self._run.plan.step_plan is not None:
            return super().evaluate(x, *args, **kwargs)
        if owner is None:
            with self.reading_input():
                return super().evaluate(x, *args, **kwargs)
        results = owner.evaluate(
            lambda: x, steps=kwargs.get("steps"), callbacks=kwargs.get("callbacks")
        )
        if kwargs.get("return_dict"):
            return results
        names = [LOSS_KEY, *sorted(k for k in results if k not in (LOSS_KEY, GLOBAL_STEP_KEY))]
        return [results[name] for name in names]

    def predict(self, x: Any = None, *args: Any, **kwargs: Any) -> Any:
        """Predicts from model_dir's latest checkpoint when bound to an Estimator.

        Returns the model_fn's predictions for every example, batches joined:
        one array, or a dict of arrays.
        """
        owner = self._owner[0]
        if owner is None:
            return super().predict(x, *args, **kwargs)
        batches = list(
            owner.predict(
                lambda: x, yield_single_examples=False, callbacks=kwargs.get("callbacks")
            )
        )
        if not batches:
            return batches
        return tf.nest.map_structure(lambda *parts: np.concatenate(parts), *batches)

    # ---- Keras steps ---------------------------------------------------------
    def train_step(self, data: Any) -> dict[str, tf.Tensor]:
        features, labels = inputs.split_element(data)
        global_step = self._store.global_step()
        step_before = global_step.read_value()
        spec = self.call_model_fn(features, labels, ModeKeys.TRAIN, step_before)
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
        logs.update(getattr(self._call_info[0], "step_logs", None) or {})
        logs[GLOBAL_STEP_KEY] = step_after
        # A hook fetching the global step gets the value the step ran at, as
        # in a TF1 session run where the read did not wait for the train_op.
        return self._with_fetches(logs, {GLOBAL_STEP_KEY: step_before})

    def test_step(self, data: Any) -> dict[str, tf.Tensor]:
        features, labels = inputs.split_element(data)
        spec = self.call_model_fn(features, labels, ModeKeys.EVAL)
        loss = _scalar(spec.loss)
        # Evaluation steps run with TF1 semantics (`_fetched_only`, applied in
        # `_make_fused_function`): the running mean is read after its update
        # only by explicit dependency.
        with _fetched_only.ops_created() as update:
            self._eval_loss.update_state(loss)
        logs: dict[str, tf.Tensor] = {}
        for name, metric in (spec.eval_metric_ops or {}).items():
            logs[name] = _metric_value(metric)
        with tf.control_dependencies(update):
            logs[LOSS_KEY] = tf.identity(self._eval_loss.result())
        return self._with_fetches(logs)

    def _evaluation_state(self) -> list[tf.Variable]:
        """What an evaluation step updates: metric variables and the loss mean."""
        loss_mean = [as_tf_variable(v) for v in self._eval_loss.variables]
        return [*self._store.local_variables(), *(v for v in loss_mean if v is not None)]

    def _with_fetches(
        self, logs: dict[str, Any], read_before: dict[str, tf.Tensor] | None = None
    ) -> dict[str, Any]:
        """Adds what hooks asked for; `read_before` gives variables' earlier reads."""
        plan = self._run.tracing_fetches
        if plan is not None:
            logs[FETCHES_KEY] = _fetches.resolve(
                plan.keys, plan.variables, self._store.get, read_before
            )
        return logs

    def predict_step(self, data: Any) -> Any:
        features, _ = inputs.split_element(data)
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
        if multi_worker.is_multi_worker(self.distribute_strategy):
            # Reading the metrics is a cross-worker collective there, which
            # cannot be pruned out of its graph; the last step's values,
            # read after its updates, are the final ones.
            return False

        def metric_values(data: Any) -> dict[str, tf.Tensor]:
            features, labels = inputs.split_element(data)
            spec = self.call_model_fn(features, labels, ModeKeys.EVAL)
            values = {}
            for name, metric in (spec.eval_metric_ops or {}).items():
                if isinstance(metric, keras.metrics.Metric):
                    values[name] = tf.convert_to_tensor(metric.result())
                else:
                    values[name] = tf.convert_to_tensor(metric[0])
            return values

        strategy = self.distribute_strategy

        # Under a strategy (even of one replica) metric updates exist only in
        # replica context; the values read there are already aggregated over
        # replicas. Without one, `run` calls the function as it is.
        def traced(data: Any) -> dict[str, tf.Tensor]:
            with self._store.scope(allow_creation=False):
                outputs = strategy.run(metric_values, args=(data,))
            return tf.nest.map_structure(
                lambda v: strategy.experimental_local_results(v)[0], outputs
            )

        wrapped = tf.compat.v1.wrap_function(traced, signature=[element_spec])
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

            def predict_batch(data: Any) -> Any:
                if strategy.num_replicas_in_sync > 1:
                    # Prediction input is not split over replicas: one
                    # replica's worth of work runs on the whole batch.
                    return self.predict_step(data)
                outputs = strategy.run(self.predict_step, args=(data,))
                return tf.nest.map_structure(lambda v: _reduce_batch(strategy, v), outputs)

            def predict() -> Any:
                # Only the predictions run: a train_op or assign the model_fn
                # builds in PREDICT mode too (as one-spec model_fns do) must not.
                outputs = _fetched_only.call(predict_batch, element.get_value(), list)
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

    def _run_then_fetch(
        self,
        fused: Any,
        one_step: Any,
        kind: str,
        iterator: Any,
        plan: _fetches.FetchPlan | None,
        steps: int,
    ) -> tuple[int, dict[str, Any], bool]:
        """Runs `steps` steps, the last one fetching what the hooks asked for.

        Returns the steps run, the last step's logs, and whether the fetching
        step ran (not when the input ended before it).
        """
        ahead, logs = 0, {}
        if steps > 1:
            ran, logs = fused(iterator, steps - 1)
            ahead = int(ran)
            if ahead < steps - 1:
                return ahead, logs, False
        fetched, fetch_logs = self._run_fetching(
            one_step, kind, iterator, plan or _fetches.FetchPlan([])
        )
        if not fetched:
            return ahead, logs, False
        if NAN_STEP_KEY in logs:  # a NaN in the steps run ahead stays reported
            fetch_logs[NAN_STEP_KEY] = logs[NAN_STEP_KEY]
        return ahead + 1, fetch_logs, True

    def _run_fetching(
        self, one_step: Any, kind: str, iterator: Any, plan: _fetches.FetchPlan
    ) -> tuple[int, dict[str, Any]]:
        """Runs one step that also returns the values hooks asked for."""
        key = (
            kind,
            tuple(plan.keys),
            tuple(id(v) for v in plan.variables.values()),
            self._spec_key(iterator),
        )
        call = self._fetching_functions.get(key)
        if call is None:

            def step_with_fetches(iterator: Any) -> Any:
                with self.tracing_fetches(plan):
                    return one_step(iterator.get_next())

            call = step_call.StepCall(
                tf.function(step_with_fetches, autograph=False).get_concrete_function(
                    iterator
                )
            )
            self._fetching_functions[key] = call
        try:
            outputs = dict(call(iterator))
        except tf.errors.OutOfRangeError:
            return 0, {}
        self._run.plan.fetches.results = _fetches.to_numpy(outputs.pop(FETCHES_KEY))
        return 1, outputs

    def _spec_key(self, iterator: Any) -> str:
        """The iterator's element spec as a key; computed once per iterator."""
        cached_ref, cached_key = self._last_spec_key
        if cached_ref is not None and cached_ref() is iterator:
            return cached_key
        key = repr(iterator.element_spec)
        try:
            self._last_spec_key = (weakref.ref(iterator), key)
        except TypeError:  # not weakly referenceable: recompute next time
            pass
        return key

    def _planned_steps(self) -> int:
        step_plan = self._run.plan.step_plan
        if step_plan is None:
            return int(self.steps_per_execution)
        return int(step_plan())

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
        # Under MultiWorkerMirroredStrategy all workers agree on each run.
        workers = multi_worker.agreement(strategy)

        def replicated_step(data: Any) -> dict[str, tf.Tensor]:
            # Replica steps run in threads of their own under MirroredStrategy,
            # and cross-replica updates (v1 optimizers' `merge_call`) in this
            # one: the store must hand out its variables here too.
            with self._store.scope(allow_creation=False):
                outputs = strategy.run(step_fn, args=(data,))
            fetched = outputs.pop(FETCHES_KEY, None) if workers else None
            logs = tf.nest.map_structure(lambda v: _reduce(strategy, v), outputs)
            if fetched is not None:
                # Each worker's hooks get their worker's values (as a TF1 hook
                # saw its own graph's): reduced over workers, the run's
                # collectives would depend on what each worker fetches.
                logs[FETCHES_KEY] = tf.nest.map_structure(
                    lambda v: strategy.experimental_local_results(v)[0], fetched
                )
            return logs

        def one_step(data: Any) -> dict[str, tf.Tensor]:
            if kind == "train":
                return replicated_step(data)
            # tf.estimator ran an evaluation step as a TF1 session run: the
            # loss, the metric updates and hook fetches, never a train_op or
            # other update the model_fn builds in EVAL mode too.
            return _fetched_only.call(replicated_step, data, self._evaluation_state)

        compiled = fused_loop.fused_steps(one_step, lambda: self._logs_specs[mode])
        traced: dict[str, Any] = {}

        def fused(iterator: Any, num_steps: int) -> Any:
            # Called through its traced function: tf.function's per-call
            # argument binding would cost a third of a call that runs no step.
            key = self._spec_key(iterator)
            concrete = traced.get(key)
            if concrete is None:
                concrete = compiled.get_concrete_function(
                    iterator, tf.TensorSpec([], tf.int32)
                )
                traced[key] = concrete
            return private_api.call_traced(
                concrete, iterator, tf.constant(num_steps, tf.int32)
            )

        last_logs: dict[str, Any] = {}

        def function(iterator: Any) -> dict[str, Any]:
            nonlocal last_logs
            self._hold_input(iterator)
            if mode not in self._logs_specs:
                self.build_mode(mode, iterator.element_spec)
            run_plan = self._run.plan
            planned = self._planned_steps()
            plan = run_plan.fetches.request
            fetching = plan is not None and bool(plan.keys)
            if workers is not None:
                planned, fetching = workers.run_plan(planned, fetching)
            if planned <= 0:
                run_plan.last_run_steps = 0
                self._stop(kind)
                return last_logs
            fetched = True
            if fetching:
                if not run_plan.loop_length:
                    planned = 1
                steps_run, logs, fetched = self._run_then_fetch(
                    fused, one_step, kind, iterator, plan, planned
                )
            else:
                steps_run, logs = fused(iterator, planned)
            steps_run = int(steps_run)
            nan_step = logs.pop(NAN_STEP_KEY, None)
            run_plan.nan_loss_step = None if nan_step is None or nan_step < 0 else int(nan_step)
            # Hooks that asked for values see no run when the input ended
            # before the step that fetches them (as a TPUEstimator loop
            # ending in OutOfRange ran no after_run).
            run_plan.last_run_steps = steps_run if fetched else 0
            self._run.executed += steps_run
            if steps_run == 0:
                self._stop(kind)
                return last_logs
            last_logs = logs
            if run_plan.after_chunk is not None:
                run_plan.after_chunk(logs)
            if steps_run < planned or self._planned_steps() <= 0:
                self._stop(kind)
            return logs

        return function

    # ---- export (used by _export) ---------------------------------------------
    def call_model_fn_with_store(
        self,
        features: Any,
        labels: Any,
        mode: str,
        store: VariableStore,
        allow_creation: bool,
    ) -> EstimatorSpec:
        """Calls the model_fn on `store`'s variables; this model is left as it was.

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
        saved_loss_names = dict(self.loss_names)
        saved_store, saved_building = self._store, self._building
        self._store, self._building = store, allow_creation
        try:
            return self.call_model_fn(features, labels, mode)
        finally:
            self._store, self._building = saved_store, saved_building
            self.spec_hooks.clear()
            self.spec_hooks.update(saved_hooks)
            self.loss_names.clear()
            self.loss_names.update(saved_loss_names)


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


def _check_scaffold(scaffold: Any) -> Any:
    """The Scaffold's `tf.train.Checkpoint` saver, or None.

    Rejects the TF1 session machinery a Scaffold held (and any other saver).
    """
    if scaffold is None:
        return None
    saver = getattr(scaffold, "_saver", None)
    checkpoint = saver if is_object_checkpoint(saver) else None
    used = [
        f
        for f in _SCAFFOLD_FIELDS
        if getattr(scaffold, f"_{f}", None) is not None
        and not (f == "saver" and checkpoint is not None)
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


def _spec_hooks(spec: EstimatorSpec, mode: str, is_chief: bool) -> tuple[Any, ...]:
    if mode == ModeKeys.TRAIN:
        # As in tf.estimator, other workers of a cluster skip the chief's hooks.
        chief_hooks = tuple(spec.training_chief_hooks or ()) if is_chief else ()
        return chief_hooks + tuple(spec.training_hooks or ())
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
    if isinstance(op, tf.distribute.DistributedValues) and not isinstance(op, tf.Variable):
        # Per-replica results of an update made in cross-replica context.
        return [t for value in op.values for t in _as_dependencies(value)]
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
    """One value from the replicas: the mean of floats, else the first replica's."""
    local = strategy.experimental_local_results(value)
    if strategy.num_replicas_in_sync == 1 or not local[0].dtype.is_floating:
        return local[0]
    return strategy.reduce(tf.distribute.ReduceOp.MEAN, value, axis=None)
