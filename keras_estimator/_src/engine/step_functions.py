"""The compiled functions a `ModelFnModel` runs: fused, fetching, predicting.

`StepFunctions` builds, per model, what Keras' `fit`, `evaluate` and
`predict` call once per run: a training or evaluation function that runs as
many steps as the run plan allows in one call of the fused loop
(`fused_loop.fused_steps`), or, when hooks fetch tensors, those steps less
one and then one *fetching* step; the predicting function, one batch per
call; and the function reading evaluation metrics' final values. Evaluation
and prediction steps run only what they fetch (`fetched_only`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import keras
import tensorflow as tf

from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.distribute import multi_worker
from keras_estimator._src.engine import fetched_only as _fetched_only
from keras_estimator._src.engine import fetches as _fetches
from keras_estimator._src.engine import (
    fetching_loop,
    fused_loop,
    inputs,
    step_call,
    summaries,
    unfetched_ops,
)
from keras_estimator._src.engine.fused_loop import NAN_STEP_KEY
from keras_estimator._src.engine.model_fn_trace import ModelFnTrace
from keras_estimator._src.engine.run_plan import RunState
from keras_estimator._src.engine.summaries import summary_dirs
from keras_estimator._src.tf_internals import (
    dataset_sources,
    distribute,
    function_calls,
    ordered_traces,
    pruning,
    summary_writers,
)

if TYPE_CHECKING:
    from keras_estimator._src.engine.model_fn_model import ModelFnModel

# The logs key of the values hooks asked for, in a fetching step's outputs.
FETCHES_KEY = "_hook_fetches"


# Ops that write to (or manage) a summary writer.
_SUMMARY_OPS = summaries.WRITE_OPS | {
    "FlushSummaryWriter",
    "CloseSummaryWriter",
    "CreateSummaryFileWriter",
    "CreateSummaryDbWriter",
}


class _SharedStep:
    """One trace of a training step, run by the fused loop and every fetching step.

    tf.estimator called the model_fn once per `train()`; a trace per
    compiled function would call it once more for each. The step is traced
    once, with `tf.function`'s ordering, and each function runs what it
    needs of that graph: the fused loop its outputs and every stateful op but
    the summaries', a fetching step those plus the tensors hooks ask for (and
    the summaries, when they ask for them, in the directories they name: the
    writes take their writer as an input, `summaries.FedWriter`, and those
    inside the model_fn's control flow run only when asked). The trace also
    returns the loss and the reads from before the step, so the usual
    fetches of a step writing no summaries (the loss, the global step) call
    it whole; other steps prune a copy.

    Args:
        wrapped: the trace (`ordered_traces.trace_ordered`) of a function
            returning `(logs, extras)`.
        outputs: the flat logs and extras as that function returned them
            (before the trace's own identities, which wait for every
            stateful op).
        num_inputs: how many flat tensors the step's input has.
        read_before: variable name -> its read from before the step.
        left_out: names of the model_fn's stateful ops no fetch needs
            (`unfetched_ops`): as in a TF1 session, they run only when a
            hook fetches them or something that needs them.
        control_inputs_before: each op's control inputs before the trace's
            automatic ones (`unfetched_ops.control_inputs_now`).
    """

    def __init__(
        self,
        wrapped: Any,
        outputs: list[tf.Tensor],
        num_inputs: int,
        read_before: dict[str, tf.Tensor],
        left_out: set[str] | None = None,
        control_inputs_before: dict[str, frozenset[str]] | None = None,
    ) -> None:
        self.wrapped = wrapped
        self.graph = wrapped.graph
        self.read_before = read_before
        self._logs_structure = wrapped.structured_outputs[0]
        self.logs_structure = self._logs_structure
        self._num_logs = len(tf.nest.flatten(self._logs_structure, expand_composites=True))
        self._outputs = outputs
        self._positions = {id(t): i for i, t in reversed(list(enumerate(outputs)))}
        # Values bound when the calling function runs (a collective's
        # instance key, under MirroredStrategy) are fed to pruned copies.
        self._late_bound = list(
            zip(
                self.graph.deferred_external_captures,
                self.graph.deferred_internal_captures,
                strict=True,
            )
        )
        late_feeds = [t for _, internal in self._late_bound for t in tf.nest.flatten(internal)]
        self._feeds = self.graph.inputs[:num_inputs] + late_feeds
        must_run = list(self.graph.control_outputs)
        self._writer = summaries.fed_writer_of(self.graph)
        writers = {
            id(tensor)
            for op in self.graph.get_operations()
            if op.type in _SUMMARY_OPS
            for tensor in op.inputs
            if tensor.dtype == tf.resource
        }
        if self._writer is not None:
            writers.add(id(self._writer.handle))
        summary_like = [op for op in must_run if any(id(t) in writers for t in op.inputs)]
        # Writes at the top level, left out of steps writing no summaries.
        self._summary_ops = [op for op in summary_like if op.type in _SUMMARY_OPS]
        # Control flow holding writes, which run only when asked (`FedWriter.flag`).
        self._guarded_ops = [op for op in summary_like if op.type not in _SUMMARY_OPS]
        summary_ids = {id(op) for op in summary_like}
        # Summaries run when hooks ask for them, in the order traced.
        left_out = (left_out or set()) - {op.name for op in summary_like}
        unfetched_ops.detach(self.graph, left_out, control_inputs_before or {})
        self._other_ops = [
            op for op in must_run if id(op) not in summary_ids and op.name not in left_out
        ]
        # Whether a call of the whole trace would run more than the steps should.
        self._runs_left_out = any(op.name in left_out for op in must_run)
        self._fused: Any = None
        # Ops from here on were built after the trace (by hooks' begin()).
        self._traced_ops = len(self.graph.get_operations())

    def separable(self) -> bool:
        """Whether steps may leave its summary writes out.

        So when every write is an op of its own, or inside control flow
        guarded by the trace's flag (a write the model_fn forced with a
        `record_if` of its own is not).
        """
        if not self._guarded_ops:
            return True
        writer = self._writer
        return writer is not None and summaries.library_writes(self.graph) <= writer.nested_writes

    def _prune(self, extra: list[Any], directories: list[str] | None) -> Any:
        """A copy of the part of the graph the outputs and `extra` need, with
        the summaries of `directories` (None: none); None when summaries left
        out would run anyway (other updates wait for them)."""
        ops = self._other_ops + self._guarded_ops
        feeds = self._feeds
        if directories:
            ops = ops + self._summary_ops
            writer = self._writer
            if writer is not None:
                handles = [
                    summary_writers.resource_handle(summaries.writer_for(d))
                    for d in directories[1:]
                ]
                ops = ops + writer.repeat_writes(handles)
                feeds = feeds + [writer.flag, writer.handle]
        tensors = [t for t in extra if isinstance(t, tf.Tensor)]
        ops = ops + [op for op in extra if isinstance(op, tf.Operation)]
        pruned = pruning.prune(self.wrapped, feeds, [self._outputs + tensors, ops])
        if not directories and any(
            op.type in _SUMMARY_OPS for op in pruned.graph.get_operations()
        ):
            return None
        return pruned

    def _call_pruned(
        self, pruned: Any, data: Any, directories: list[str] | None = None
    ) -> list[tf.Tensor]:
        """The flat outputs of a pruned copy called on `data` (writing to `directories`)."""
        late_values = [tensor for closure, _ in self._late_bound for tensor in closure()]
        fed = []
        if directories and self._writer is not None:
            first = summaries.writer_for(directories[0])
            fed = [tf.constant(True), summary_writers.resource_handle(first)]
        return pruned(*tf.nest.flatten(data, expand_composites=True), *late_values, *fed)[0]

    def _logs(self, flat: list[tf.Tensor]) -> Any:
        return tf.nest.pack_sequence_as(
            self._logs_structure, flat[: self._num_logs], expand_composites=True
        )

    def fused_step(self) -> Callable[[Any], Any] | None:
        """The step without its summaries (None: they cannot be left out)."""
        if not self._summary_ops and not self._guarded_ops and not self._runs_left_out:
            return lambda data: function_calls.call_traced(self.wrapped, data)[0]
        if self._fused is None:
            self._fused = self._prune([], None) or False
        if self._fused is False:
            return None
        fused = self._fused
        return lambda data: self._logs(self._call_pruned(fused, data))

    def fetching_step(
        self, extra: dict[str, Any], directories: list[str]
    ) -> Callable[[Any], tuple[Any, dict[str, tf.Tensor]]] | None:
        """A function of the step's input: its logs and `extra`'s tensors,
        writing summaries to `directories` (none: no summaries).

        None when the summaries must be left out and cannot be.
        """
        keys = [k for k, v in extra.items() if isinstance(v, tf.Tensor)]
        outputs_only = not directories and all(id(v) in self._positions for v in extra.values())
        positions = [self._positions[id(extra[k])] for k in keys] if outputs_only else []
        if (
            outputs_only
            and not self._summary_ops
            and not self._guarded_ops
            and not self._runs_left_out
        ):

            def step(data: Any) -> tuple[Any, dict[str, tf.Tensor]]:
                logs, extras = function_calls.call_traced(self.wrapped, data)
                flat = tf.nest.flatten(logs, expand_composites=True) + list(extras)
                return logs, {k: flat[i] for k, i in zip(keys, positions, strict=True)}

            return step
        if outputs_only and self.fused_step() is not None:
            # What is fetched is among the step's outputs (the loss, the
            # reads): the fused loop's copy without the summaries returns
            # it already, and pruning another copy cost more than a hundred
            # steps of a small model.
            fused = self._fused

            def fused_fetching(data: Any) -> tuple[Any, dict[str, tf.Tensor]]:
                flat = self._call_pruned(fused, data)
                return self._logs(flat), {k: flat[i] for k, i in zip(keys, positions, strict=True)}

            return fused_fetching
        _fetches.order_late_reads_first(self.graph, list(extra.values()), self._traced_ops)
        pruned = self._prune(list(extra.values()), list(directories) or None)
        if pruned is None:
            return None
        count = len(self._outputs)
        # The directories' writers live as long as the step.
        files = [summaries.event_file(d) for d in directories]

        def pruned_step(data: Any, files: list[Any] = files) -> tuple[Any, dict[str, tf.Tensor]]:
            flat = self._call_pruned(pruned, data, directories)
            return self._logs(flat), dict(zip(keys, flat[count:], strict=True))

        return pruned_step


class _SharedEvaluation:
    """One trace of an evaluation step, run by the fused loop.

    Evaluation steps run with TF1 semantics (`fetched_only`): the trace is
    a `tf.compat.v1.wrap_function` one, and each fused loop runs the part of
    it that computes the step's outputs and metric updates. The final
    metric values are read from the same trace (`StepFunctions.final_metric_values`).
    A fetching step runs that part and what hooks fetch from the graph,
    including tensors a hook's `begin()` added to it (`merge_all()`), as
    tf.estimator's hooks built theirs in the evaluation graph.
    """

    def __init__(self, traced: Any, state: Callable[[], Any]) -> None:
        self._traced = traced
        self.graph = traced.graph
        self.logs_structure = traced.structured_outputs
        self._state = state
        # Nothing is updated before the reads of an evaluation step.
        self.read_before: dict[str, tf.Tensor] = {}

    def fused_step(self) -> Callable[[Any], Any]:
        return lambda data: _fetched_only.call_traced(self._traced, data, self._state)

    def fetching_step(
        self, extra: dict[str, Any], directories: list[str]
    ) -> Callable[[Any], tuple[Any, dict[str, tf.Tensor]]]:
        """A function of the step's input: its logs and `extra`'s tensors
        (`extra`'s operations run too). Evaluation writes no summaries."""
        keys = [k for k, v in extra.items() if isinstance(v, tf.Tensor)]
        fetched = list(extra.values())

        def step(data: Any) -> tuple[Any, dict[str, tf.Tensor]]:
            logs, values = _fetched_only.call_traced_with(
                self._traced, data, self._state, fetched
            )
            return logs, dict(zip(keys, values, strict=True))

        return step


class StepFunctions:
    """Builds and caches one model's compiled functions.

    Args:
        model: the `ModelFnModel` (held weakly: it owns this object).
        trace: its model_fn caller.
    """

    def __init__(self, model: ModelFnModel, trace: ModelFnTrace) -> None:
        self._model: ModelFnModel = weakref.proxy(model)  # type: ignore[assignment]
        self._trace = trace
        self._fetching_functions: dict[Any, Any] = {}
        # Per input structure, the fetch plan of the training's last fetching
        # step: the run that fetches nothing uses its compiled run
        # (`plain_run`).
        self._last_ahead_plan: dict[str, _fetches.FetchPlan] = {}
        self._last_spec_key: tuple[Any, str] = (None, "")
        self._last_never_ends: tuple[Any, bool] = (None, False)
        self._value_functions: dict[str, Any] = {}
        # The evaluation's fused loop for an input (one device only).
        self._evaluation_loop: Callable[[Any], Any] | None = None
        # kind -> builds the shared step of an element spec ahead of the
        # first call (`prebuild`); set by `fused_function` where shared.
        self._prebuilders: dict[str, Callable[[Any], Any]] = {}

    def final_metric_values(self, element_spec: Any) -> dict[str, Any]:
        """Each eval metric's value op, read after all updates (as TF1 did).

        The model_fn is traced once more in a TF1-style graph and pruned to the
        value ops, so running it reads the metric variables without running
        any update. Metrics whose value depends on the input (not on metric
        variables alone) keep the value of the last step.
        """
        function = self.metric_values_function(element_spec)
        if function is False:
            return {}
        return {
            name: tf.nest.map_structure(lambda v: v.numpy(), value)
            for name, value in function().items()
        }

    def metric_values_function(self, element_spec: Any) -> Any:
        """The function of no input reading the final metric values; False: none."""
        key = repr(element_spec)
        function = self._value_functions.get(key)  # made by a shared trace, or:
        if function is None:
            function = self._value_function(element_spec)
            self._value_functions[key] = function
        return function

    def evaluation_loop(self) -> Callable[[Any], Any] | None:
        """The evaluation's fused loop traced for an iterator (a concrete
        function of (iterator, steps) giving (steps run, last logs)); None
        where the evaluation step is not shared (under a strategy)."""
        return self._evaluation_loop

    def _value_function(self, element_spec: Any) -> Any:
        if multi_worker.is_multi_worker(self._model.distribute_strategy):
            # Reading the metrics is a cross-worker collective there, which
            # cannot be pruned out of its graph; the last step's values,
            # read after its updates, are the final ones.
            return False

        def metric_values(data: Any) -> dict[str, tf.Tensor]:
            features, labels = inputs.split_element(data)
            spec = self._trace.call(features, labels, ModeKeys.EVAL)
            values = {}
            for name, metric in (spec.eval_metric_ops or {}).items():
                if isinstance(metric, keras.metrics.Metric):
                    values[name] = tf.convert_to_tensor(metric.result())
                else:
                    values[name] = tf.nest.map_structure(tf.convert_to_tensor, metric[0])
            return values

        strategy = self._model.distribute_strategy

        # Under a strategy (even of one replica) metric updates exist only in
        # replica context; the values read there are already aggregated over
        # replicas. Without one, `run` calls the function as it is.
        def traced(data: Any) -> dict[str, tf.Tensor]:
            with self._trace.store.scope(allow_creation=False):
                outputs = strategy.run(metric_values, args=(data,))
            return tf.nest.map_structure(
                lambda v: strategy.experimental_local_results(v)[0], outputs
            )

        wrapped = tf.compat.v1.wrap_function(traced, signature=[element_spec])
        try:
            return pruning.prune(wrapped, [], wrapped.structured_outputs)
        except pruning.PRUNE_ERRORS:
            return False

    def fetch_once(self, plan: _fetches.FetchPlan, iterator: Any) -> dict[str, Any] | None:
        """A TF1 `session.run(fetches)` on the TRAIN graph, outside any step.

        The model_fn is called in TRAIN mode on the next batch of `iterator`
        and only what `plan` fetches runs (no train_op, no global step
        update), as a session run of those fetches did. Returns key ->
        numpy value, or None when the input has ended.
        """
        strategy = self._model.distribute_strategy
        store = self._trace.store

        def fetch_step(data: Any) -> dict[str, tf.Tensor]:
            features, labels = inputs.split_element(data)
            self._trace.call(features, labels, ModeKeys.TRAIN)
            return _fetches.resolve(plan.keys, plan.variables, store.get)

        def replicated(data: Any) -> dict[str, tf.Tensor]:
            with store.scope(allow_creation=False):
                outputs = strategy.run(fetch_step, args=(data,))
            return tf.nest.map_structure(
                lambda v: strategy.experimental_local_results(v)[0], outputs
            )

        def once(iterator: Any) -> dict[str, tf.Tensor]:
            with self._trace.tracing_fetches(plan):
                return _fetched_only.call(replicated, iterator.get_next(), list)

        try:
            outputs = tf.function(once, autograph=False)(iterator)
        except tf.errors.OutOfRangeError:
            return None
        return _fetches.to_numpy(dict(outputs))

    # ---- compiled functions ------------------------------------------------
    def predict_function(self) -> Callable[[Any], Any]:
        """One batch's predictions per call; StopIteration at the input's end."""
        strategy = self._model.distribute_strategy

        # The predictions' structure, from the branch that makes them (traced
        # first): the predicting function may be the mode's building trace.
        made: list[Any] = []
        # The last trace of the model_fn's call; input spec key -> its trace
        # (whose graph a hook's begin() may build on, `_predict_fetching`).
        bodies: list[Any] = []
        body_of: dict[str, Any] = {}

        def one_batch(iterator: Any) -> Any:
            element = iterator.get_next_as_optional()

            def predict_batch(data: Any) -> Any:
                if strategy.num_replicas_in_sync > 1:
                    # Prediction input is not split over replicas: one
                    # replica's worth of work runs on the whole batch.
                    return self._model.predict_step(data)
                outputs = self._run(strategy, self._model.predict_step, data)
                return tf.nest.map_structure(lambda v: _reduce_batch(strategy, v), outputs)

            def predict(data: Any) -> Any:
                # Only the predictions run: a train_op or assign the model_fn
                # builds in PREDICT mode too (as one-spec model_fns do) must not.
                signature = tf.nest.map_structure(tf.type_spec_from_value, data)
                body = tf.compat.v1.wrap_function(predict_batch, signature=[signature])
                bodies[:] = [body]
                return _fetched_only.call_traced(body, data, list)

            return _optional_batch(element, predict, made)

        compiled = tf.function(one_batch, reduce_retracing=True, autograph=False)
        traced: dict[str, Any] = {}

        def prebuild(element_spec: Any) -> Any:
            traced[repr(element_spec)] = compiled.get_concrete_function(
                tf.data.IteratorSpec(element_spec)
            )
            body_of[repr(element_spec)] = bodies[0]
            return made[0]

        if shares_one_trace(strategy):
            self._prebuilders["predict"] = prebuild

        def function(iterator: Any) -> Any:
            if ModeKeys.PREDICT not in self._model.logs_specs:
                self._model.build_mode(ModeKeys.PREDICT, iterator.element_spec)
            # Called through its traced function, as the fused loop is: a
            # single-example predict() is about one such call.
            key = self._spec_key(iterator)
            concrete = traced.get(key)
            if concrete is None:
                concrete = traced[key] = compiled.get_concrete_function(iterator)
                body_of[key] = bodies[0]
            plan = self._model.run_state.fetches.request
            if plan is not None and plan.keys:
                return self._predict_fetching(iterator, plan, key, body_of[key])
            outputs = function_calls.call_traced(concrete, iterator)
            if not outputs.has_value():
                raise StopIteration
            return outputs.get_value()

        return function

    def _predict_fetching(
        self, iterator: Any, plan: _fetches.FetchPlan, spec_key: str, body: Any
    ) -> Any:
        """One batch's predictions, also fetching what `plan` asks (run state's results).

        The fetches are looked up in the graph of the predicting step's
        model_fn call (`body`, what hooks' begin() saw), so tensors a hook
        built there (`merge_all()`) run with the predictions, as in
        tf.estimator 2.15's prediction graph.
        """
        key = ("predict", *fetch_plan_key(plan), spec_key)
        concrete = self._fetching_functions.get(key)
        if concrete is None:
            in_graph, after = _fetches.split_for_graph(
                body.graph, plan.keys, plan.variables, self._trace.store.get, {}
            )
            keys = [k for k, v in in_graph.items() if isinstance(v, tf.Tensor)]
            made: list[Any] = []

            def one_batch(iterator: Any) -> Any:
                element = iterator.get_next_as_optional()

                def predict(data: Any) -> Any:
                    outputs, values = _fetched_only.call_traced_with(
                        body, data, list, list(in_graph.values())
                    )
                    fetched = dict(zip(keys, values, strict=True))
                    fetched.update(_fetches.read_after(after))
                    return outputs, fetched

                return _optional_batch(element, predict, made)

            concrete = tf.function(one_batch, autograph=False).get_concrete_function(iterator)
            self._fetching_functions[key] = concrete
        optional = function_calls.call_traced(concrete, iterator)
        if not optional.has_value():
            raise StopIteration
        outputs, fetched = optional.get_value()
        self._model.run_state.fetches.results = _fetches.to_numpy(fetched)
        return outputs

    def _run_then_fetch(
        self,
        fused: Any,
        one_step: Any,
        kind: str,
        iterator: Any,
        plan: _fetches.FetchPlan | None,
        steps: int,
        shared_for: Callable[[Any], Any],
    ) -> tuple[int, dict[str, Any], bool]:
        """Runs `steps` steps, the last one fetching what the hooks asked for.

        Returns the steps run, the last step's logs, and whether the fetching
        step ran (not when the input ended before it, nor after a NaN loss,
        which ends the run at its step).
        """
        ahead, logs = 0, {}
        if steps > 1:
            ran, logs = fused(iterator, steps - 1)
            ahead = int(ran)
            if ahead < steps - 1 or int(logs.get(NAN_STEP_KEY, -1)) >= 0:
                return ahead, logs, False
        fetched, fetch_logs = self._run_fetching(
            one_step, kind, iterator, plan or _fetches.FetchPlan([]), shared_for
        )
        if not fetched:
            return ahead, logs, False
        if NAN_STEP_KEY in logs:  # a NaN in the steps run ahead stays reported
            fetch_logs[NAN_STEP_KEY] = logs[NAN_STEP_KEY]
        return ahead + 1, fetch_logs, True

    def _run_fetching(
        self,
        one_step: Any,
        kind: str,
        iterator: Any,
        plan: _fetches.FetchPlan,
        shared_for: Callable[[Any], Any],
    ) -> tuple[int, dict[str, Any]]:
        """Runs one step that also returns the values hooks asked for."""
        key = (kind, *fetch_plan_key(plan), self._spec_key(iterator))
        if kind == "train" and self._model.run_state.fuses_run_end:
            # What the hooks fetch at a training's first step, they most
            # likely fetch at the end of its later runs (`plain_run`).
            self._last_ahead_plan.setdefault(self._spec_key(iterator), plan)
        call = self._fetching_functions.get(key)
        if call is None:
            directories = summary_dirs(plan.keys)
            # Evaluation fetches from its shared trace too: a hook's begin()
            # may have built them into that graph. It writes no summaries.
            shared = shared_for(iterator)

            fetching = (
                None if shared is None else self._shared_fetching(shared, plan, bool(directories))
            )
            step = fetching_step(self._trace, one_step, plan, fetching)

            def compiled(iterator: Any, step: Any = step) -> step_call.StepCall:
                return step_call.StepCall(
                    tf.function(step, autograph=False).get_concrete_function(iterator)
                )

            call = (
                compiled(iterator)
                if fetching is None or shared is None
                else _EagerFirst(fetching, shared.graph, compiled)
            )
            self._fetching_functions[key] = call
        if kind == "train" and isinstance(call, _EagerFirst) and call.compiles_next:
            served = self._fetch_in_run_function(iterator, plan)
            if served is not None:
                return served
        try:
            outputs = dict(call(iterator))
        except tf.errors.OutOfRangeError:
            return 0, {}
        self._model.run_state.fetches.results = _fetches.to_numpy(outputs.pop(FETCHES_KEY))
        return 1, outputs

    def _fetch_in_run_function(
        self, iterator: Any, plan: _fetches.FetchPlan
    ) -> tuple[int, dict[str, Any]] | None:
        """One fetching step through the compiled run that ends with it, if made.

        A training call's first step fetches for the hooks on its own; the
        runs after it fuse their steps with such a fetching step
        (`ahead_then_fetch`). The next call's first step would compile the
        lone step (a trace of its own, tens of milliseconds); the run's
        function with no step ahead runs the same fetching step on the same
        element instead. None when there is no such function yet.
        """
        concrete = self._fetching_functions.get(self._ahead_key(iterator, plan))
        if not concrete:
            return None
        _, _, fetched, outputs = function_calls.call_traced(
            concrete, iterator, tf.constant(1, tf.int32), tf.constant(True)
        )
        if not bool(fetched):
            return 0, {}  # the input has ended
        outputs = dict(outputs)
        self._model.run_state.fetches.results = _fetches.to_numpy(outputs.pop(FETCHES_KEY))
        return 1, outputs

    def _run_fetching_every_step(
        self,
        iterator: Any,
        plan: _fetches.FetchPlan,
        steps: int,
        shared_for: Callable[[Any], Any],
    ) -> tuple[int, dict[str, Any], bool] | None:
        """Runs up to `steps` steps in one call, each fetching what `plan` asks.

        Every step is the one-step fetching step (`_shared_fetching`) in a
        loop, so each step's values are those a run of that step alone
        fetches. The run ends early after a step whose loss is NaN (the
        loop reports it at that step, as after a one-step run) or when the
        input ends. Each step's values and global step go to the run
        state's `fetches.stepwise`. Returns `(steps run, last logs, whether
        the input ended)`, or None when the steps cannot be run so (no shared
        trace of the step, or a fetched value's shape is not fixed): the
        caller runs one fetching step instead.
        """
        endless = self._never_ends(iterator)
        key = ("every_step", *fetch_plan_key(plan), self._spec_key(iterator), endless)
        call: Any = self._fetching_functions.get(key)
        if call is None:
            shared = shared_for(iterator)
            body = None if shared is None else self._shared_fetching(shared, plan, False)
            call = False
            fetched = (
                None
                if body is None
                else fetching_loop.fetched_spec(body, iterator.element_spec, FETCHES_KEY)
            )
            if body is not None and fetched is not None:
                looped = fetching_loop.fetching_steps(
                    body,
                    lambda: self._model.logs_specs[ModeKeys.TRAIN],
                    fetched,
                    FETCHES_KEY,
                    endless,
                )
                call = (
                    looped.get_concrete_function(iterator, tf.TensorSpec([], tf.int32)),
                    fetching_loop.steps_within_memory(fetched),
                )
            self._fetching_functions[key] = call
        if call is False:
            return None
        concrete, most_steps = call
        steps = min(steps, most_steps)
        count, logs, nan_stop, global_steps, stacked = function_calls.call_traced(
            concrete, iterator, tf.constant(steps, tf.int32)
        )
        count = int(count)
        state = self._model.run_state.fetches
        state.results = {}
        input_ended = count < steps and not bool(nan_stop)
        state.stepwise = _fetches.StepwiseValues(
            global_steps.numpy(), {k: v.numpy() for k, v in stacked.items()}
        )
        return count, logs, input_ended

    def shared_fetching(
        self,
        shared: _SharedStep | _SharedEvaluation,
        plan: _fetches.FetchPlan,
        summaries: bool,
    ) -> Callable[[Any], dict[str, Any]] | None:
        """A step of `shared` returning its logs and, under `FETCHES_KEY`, what `plan` fetches.

        None when it cannot (its summaries cannot be left out). The
        parameter-server driver schedules it on the workers.
        """
        return self._shared_fetching(shared, plan, summaries)

    def _shared_fetching(
        self,
        shared: _SharedStep | _SharedEvaluation,
        plan: _fetches.FetchPlan,
        summaries: bool,
    ) -> Callable[[Any], dict[str, Any]] | None:
        """A step of `shared` returning its logs and what `plan` fetches (None: it cannot)."""
        in_graph, after = _fetches.split_for_graph(
            shared.graph, plan.keys, plan.variables, self._trace.store.get, shared.read_before
        )
        step = shared.fetching_step(in_graph, summary_dirs(plan.keys) if summaries else [])
        if step is None:
            return None

        def fetching(data: Any) -> dict[str, Any]:
            logs, values = step(data)
            logs = dict(logs)
            # Variables are read after the step's updates (ordered after the
            # call that makes them), as the step read them in its own trace.
            values.update(_fetches.read_after(after))
            logs[FETCHES_KEY] = values
            return logs

        return fetching

    def _trace_shared(
        self,
        replicated_step: Callable[[Any], Any],
        element_spec: Any,
    ) -> _SharedStep | None:
        """Traces the training step once for every function of its input structure.

        None when its summaries cannot be left out of the fused loop; each
        function then traces the step itself.
        """
        outputs: list[tf.Tensor] = []
        left_out: set[str] = set()
        before: dict[str, frozenset[str]] = {}

        with self._trace.tracing_shared() as record:

            def step(data: Any) -> Any:
                logs = tf.nest.map_structure(tf.convert_to_tensor, replicated_step(data))
                spec = record.spec
                loss = getattr(spec, "loss", None)
                extras = [t for t in (loss, *record.read_before.values()) if isinstance(t, tf.Tensor)]
                outputs.extend(tf.nest.flatten(logs, expand_composites=True))
                outputs.extend(extras)
                graph = tf.compat.v1.get_default_graph()
                left_out.update(unfetched_ops.left_out(graph, record.windows, outputs))
                if left_out:
                    before.update(unfetched_ops.control_inputs_now(graph))
                return logs, extras

            wrapped = ordered_traces.trace_ordered(
                step, [distribute.as_read_in_a_loop(element_spec)], "train_step"
            )
        shared = _SharedStep(
            wrapped,
            outputs,
            len(tf.nest.flatten(element_spec, expand_composites=True)),
            record.read_before,
            left_out,
            before,
        )
        return shared if shared.separable() else None

    def _trace_shared_evaluation(
        self, replicated_step: Callable[[Any], Any], element_spec: Any
    ) -> _SharedEvaluation:
        """Traces the evaluation step once, for the fused loop and the final metric values."""
        values: dict[str, Any] = {}

        with self._trace.tracing_shared() as record:

            def step(data: Any) -> Any:
                logs = replicated_step(data)
                spec = record.spec
                metrics = spec.eval_metric_ops if spec is not None else None
                for name, metric in (metrics or {}).items():
                    if isinstance(metric, keras.metrics.Metric):
                        values[name] = tf.convert_to_tensor(metric.result())
                    else:
                        values[name] = tf.nest.map_structure(tf.convert_to_tensor, metric[0])
                return logs

            traced = tf.compat.v1.wrap_function(
                step, signature=[distribute.as_read_in_a_loop(element_spec)]
            )
        key = repr(element_spec)
        if key not in self._value_functions and multi_worker.is_multi_worker(
            self._model.distribute_strategy
        ):
            # Reading the metrics is a collective across workers (see
            # `_value_function`): the last step's values are the final ones.
            self._value_functions[key] = False
        if key not in self._value_functions:
            # Pruned before the steps order the graph's metric updates ahead
            # of its reads: running it reads the metric variables and updates
            # nothing.
            try:
                self._value_functions[key] = pruning.prune(traced, [], values)
            except pruning.PRUNE_ERRORS:
                self._value_functions[key] = False
        return _SharedEvaluation(traced, self._model.evaluation_state)

    def _run(self, strategy: tf.distribute.Strategy, fn: Callable[[Any], Any], data: Any) -> Any:
        """`strategy.run(fn, args=(data,))`; `fn(data)` for a model outside its store's strategy.

        Such a model (evaluation without eval_distribute, a parameter-server
        chief's evaluation and prediction) runs under TensorFlow's default
        strategy, whose `run` enters that strategy's scope: a variable the
        store then creates in its own strategy's scope, where the step's
        trace makes it, would be refused as a mix of strategies. Outside
        any scope the step sees the same (default) replica context.
        """
        if (
            self._trace.store.strategy is not None
            and not tf.distribute.has_strategy()
            and strategy is tf.distribute.get_strategy()
        ):
            return fn(data)
        return strategy.run(fn, args=(data,))

    def prebuild(self, kind: str, element_spec: Any) -> Any:
        """The shared step of `element_spec`, traced now; None where steps are not shared."""
        prebuilder = self._prebuilders.get(kind)
        return None if prebuilder is None else prebuilder(element_spec)

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

    def _ahead_key(self, iterator: Any, plan: _fetches.FetchPlan) -> tuple[Any, ...]:
        """Where the run of fused steps ending with `plan`'s fetching step is cached
        (`ahead_then_fetch`, also read by `_fetch_in_run_function`)."""
        return ("ahead", *fetch_plan_key(plan), self._spec_key(iterator), self._never_ends(iterator))

    def _never_ends(self, iterator: Any) -> bool:
        """Whether the iterator can never run out (`dataset_sources.never_ends`).

        Its loops then read each step's element with no optional to carry
        and test: about a tenth of a small model's fused step. Worked out
        once per iterator.
        """
        cached_ref, cached = self._last_never_ends
        if cached_ref is not None and cached_ref() is iterator:
            return cached
        endless = dataset_sources.never_ends(iterator)
        try:
            self._last_never_ends = (weakref.ref(iterator), endless)
        except TypeError:  # not weakly referenceable: worked out again next time
            pass
        return endless

    def _planned_steps(self, run: RunState) -> int:
        planned = run.planned_steps()
        if planned is None:
            return int(self._model.steps_per_execution)
        return int(planned)

    def _plans_no_step(self, run: RunState) -> bool:
        """Whether `_planned_steps(run)` is 0, asking no more than that needs."""
        no_step = run.plans_no_step()
        if no_step is None:
            return int(self._model.steps_per_execution) <= 0
        return no_step

    def _stop(self, kind: str) -> None:
        if kind == "train":
            self._model.stop_training = True
        else:
            self._model.stop_evaluating = True

    def fused_function(
        self, step_fn: Callable[[Any], dict[str, tf.Tensor]], kind: str
    ) -> Callable[[Any], dict[str, Any]]:
        strategy = self._model.distribute_strategy
        mode = ModeKeys.TRAIN if kind == "train" else ModeKeys.EVAL
        # Under MultiWorkerMirroredStrategy all workers agree on each run.
        workers = multi_worker.agreement(strategy)

        def replicated_step(data: Any) -> dict[str, tf.Tensor]:
            # Replica steps run in threads of their own under MirroredStrategy,
            # and cross-replica updates (v1 optimizers' `merge_call`) in this
            # one: the store must hand out its variables here too (and, in
            # the building trace, create those, as a v1 optimizer's slots).
            with self._trace.store.scope(allow_creation=self._trace.building):
                outputs = self._run(strategy, step_fn, data)
            fetched = outputs.pop(FETCHES_KEY, None) if workers else None
            loss_reduction = _reported_loss_reduction(strategy) if kind == "train" else None
            logs = {
                key: _reduce(strategy, value, loss_reduction if key == "loss" else None)
                for key, value in outputs.items()
            }
            if fetched is not None:
                # Each worker's hooks get their worker's values (as a TF1 hook
                # saw its own graph's): reduced over workers, the run's
                # collectives would depend on what each worker fetches.
                logs[FETCHES_KEY] = tf.nest.map_structure(
                    lambda v: strategy.experimental_local_results(v)[0], fetched
                )
            return logs

        # A step is traced once for the fused loop and, in training, every
        # fetching step (`_SharedStep`, `_SharedEvaluation`), on each worker
        # too: every pruned copy keeps the step's collectives, whose instance
        # keys are bound when the calling function runs.
        shares = shares_one_trace(strategy)
        shared_steps: dict[str, Any] = {}
        tracing: list[Any] = [None]

        def shared_for(iterator: Any) -> Any:
            """The shared step for `iterator`'s input (it writes summaries to
            whichever directories a function built on it feeds)."""
            if not shares:
                return None
            return shared_for_spec(self._spec_key(iterator), iterator.element_spec)

        def shared_for_spec(spec_key: str, element_spec: Any) -> Any:
            # One trace per input structure: its summaries are written to
            # the directories each function feeds (`summaries.FedWriter`).
            if spec_key not in shared_steps:
                shared_steps[spec_key] = (
                    self._trace_shared(replicated_step, element_spec)
                    if kind == "train"
                    else self._trace_shared_evaluation(replicated_step, element_spec)
                )
            return shared_steps[spec_key]

        if shares:
            self._prebuilders[kind] = lambda element_spec: shared_for_spec(
                repr(element_spec), element_spec
            )

        def one_step(data: Any) -> dict[str, tf.Tensor]:
            if tracing[0] is not None:
                return tracing[0](data)
            if kind == "train":
                return replicated_step(data)
            # tf.estimator ran an evaluation step as a TF1 session run: the
            # loss, the metric updates and hook fetches, never a train_op or
            # other update the model_fn builds in EVAL mode too.
            return _fetched_only.call(replicated_step, data, self._model.evaluation_state)

        compiled = {
            endless: fused_loop.fused_steps(one_step, lambda: self._model.logs_specs[mode], endless)
            for endless in (False, True)
        }
        traced: dict[tuple[str, bool], Any] = {}

        def loop_for(iterator: Any) -> Any:
            # A distributed iterator (several replicas) keeps the optional's test.
            endless = self._never_ends(iterator)
            key = (self._spec_key(iterator), endless)
            concrete = traced.get(key)
            if concrete is None:
                shared = shared_for(iterator)
                tracing[0] = None if shared is None else shared.fused_step()
                try:
                    concrete = compiled[endless].get_concrete_function(
                        iterator, tf.TensorSpec([], tf.int32)
                    )
                finally:
                    tracing[0] = None
                traced[key] = concrete
            return concrete

        def fused(iterator: Any, num_steps: int) -> Any:
            # Called through its traced function: tf.function's per-call
            # argument binding would cost a third of a call that runs no step.
            return function_calls.call_traced(
                loop_for(iterator), iterator, tf.constant(num_steps, tf.int32)
            )

        if kind == "test" and shares:
            self._evaluation_loop = loop_for

        def ahead_function(iterator: Any, plan: _fetches.FetchPlan) -> Any:
            """The compiled run of fused steps ending with `plan`'s fetching step
            (`fused_loop.fused_then_fetching`), or False when the step has no
            shared trace to fuse."""
            key = self._ahead_key(iterator, plan)
            endless = self._never_ends(iterator)
            concrete = self._fetching_functions.get(key)
            if concrete is None:
                concrete = False
                directories = summary_dirs(plan.keys)
                shared = shared_for(iterator)
                fetching = (
                    None if shared is None else self._shared_fetching(shared, plan, bool(directories))
                )
                fused_step = None if shared is None else shared.fused_step()
                if fetching is not None and fused_step is not None:
                    last = tf.function(fetching, autograph=False).get_concrete_function(
                        iterator.element_spec
                    )
                    tracing[0] = fused_step
                    try:
                        concrete = fused_loop.fused_then_fetching(
                            one_step, last, lambda: self._model.logs_specs[mode], endless
                        ).get_concrete_function(
                            iterator, tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.bool)
                        )
                    finally:
                        tracing[0] = None
                self._fetching_functions[key] = concrete
            return concrete

        def ahead_then_fetch(
            iterator: Any, plan: _fetches.FetchPlan, steps: int
        ) -> tuple[int, dict[str, Any], bool] | None:
            """`steps - 1` fused steps and the fetching step, in one call.

            Returns the steps run, the last logs and whether the fetching
            step ran; None when the step has no shared trace to fuse.
            """
            if workers is not None:
                # Every worker must call the same functions: each runs its
                # steps ahead, then the fetching step, in calls of their own.
                return None
            concrete = ahead_function(iterator, plan)
            if concrete is False:
                return None
            self._last_ahead_plan[self._spec_key(iterator)] = plan
            count, logs, fetched, outputs = function_calls.call_traced(
                concrete, iterator, tf.constant(steps, tf.int32), tf.constant(True)
            )
            fetch_state = self._model.run_state.fetches
            if not bool(fetched):
                fetch_state.results = {}
                fetch_state.missed = True
                return int(count), logs, False
            outputs = dict(outputs)
            fetch_state.results = _fetches.to_numpy(outputs.pop(FETCHES_KEY))
            if NAN_STEP_KEY in logs:  # a NaN in the steps run ahead stays reported
                outputs[NAN_STEP_KEY] = logs[NAN_STEP_KEY]
            return int(count) + 1, outputs, True

        def plain_run(iterator: Any, num_steps: int, plans_training: bool) -> Any:
            """`num_steps` fused steps that fetch nothing.

            A training in runs the loop plans, on one device, fetches for
            some runs' last step: the function compiled for those runs (`ahead_function`,
            for the hooks' last plan, their first step's in a first call)
            runs these steps too, told not to fetch, rather than a plain
            loop compiled besides it. The same steps run, in the same
            loop (`fused_loop.steps_loop`).
            """
            plan = self._last_ahead_plan.get(self._spec_key(iterator)) if plans_training else None
            # (`plans_training` already excludes a cluster's workers.)
            concrete = False if plan is None else ahead_function(iterator, plan)
            if concrete is False:
                return fused(iterator, num_steps)
            count, logs, _, _ = function_calls.call_traced(
                concrete, iterator, tf.constant(num_steps + 1, tf.int32), tf.constant(False)
            )
            return count, dict(logs)

        last_logs: dict[str, Any] = {}

        def function(iterator: Any) -> dict[str, Any]:
            nonlocal last_logs
            self._model.hold_input(iterator)
            if mode not in self._model.logs_specs:
                self._model.build_mode(mode, iterator.element_spec)
            run = self._model.run_state
            plan = run.fetches.request
            fetching = plan is not None and bool(plan.keys)
            # One process trains in runs its loop plans (not a fixed-length
            # loop, not a cluster's agreed runs).
            plans_training = kind == "train" and workers is None and not run.loop_length
            if plans_training and plan is not None and fetching and _fetches_for_one_step(run, plan):
                # The hooks fetch for a run of one step: it runs one step
                # unless none is due, whatever else the plan would allow.
                planned = 0 if self._plans_no_step(run) else 1
            else:
                planned = self._planned_steps(run)
            if workers is not None:
                planned, fetching = workers.run_plan(planned, fetching)
            if planned <= 0:
                run.last_run_steps = 0
                self._stop(kind)
                return last_logs
            fetched = True
            # Observers' fetches at every step of a longer run (`fetching_loop`).
            stepwise = (
                plans_training
                and fetching
                and plan is not None
                and plan.every_step
                and shares
                and planned > 1
            )
            if stepwise and plan is not None:
                stepwise_run = self._run_fetching_every_step(iterator, plan, planned, shared_for)
                if stepwise_run is not None:
                    steps_run, logs, input_ended = stepwise_run
                    # A NaN loss ends such a run: its last step's loss shows it.
                    run.nan_loss_step = None
                    run.last_run_steps = steps_run
                    run.record(steps_run, logs)
                    if steps_run == 0:
                        self._stop(kind)
                        return last_logs
                    last_logs = logs
                    if input_ended or _input_used_up(run) or self._plans_no_step(run):
                        self._stop(kind)
                    return logs
            # Hooks that fetch for the run's last step were told its length
            # (`FetchState.run_steps`; one machine's training only).
            ahead_run = (
                fetching and kind == "train" and not run.loop_length
                and min(planned, run.fetches.run_steps) > 1
            )
            if ahead_run and plan is not None:
                planned = min(planned, run.fetches.run_steps)
                ahead = ahead_then_fetch(iterator, plan, planned)
                if ahead is None:
                    # No shared trace to fuse: the same run in two calls.
                    ahead = self._run_then_fetch(
                        fused, one_step, kind, iterator, plan, planned, shared_for
                    )
                    if not ahead[2]:
                        run.fetches.results = {}
                        run.fetches.missed = True
                steps_run, logs, last_ran = ahead
                if not last_ran and steps_run == planned - 1:
                    # A NaN loss ended the run before its last step (or the
                    # input ended just there), as it ended a fused call
                    # before a fetching call: stopping is not decided here.
                    planned = steps_run
                # The steps that ran are the hooks' run, with no fetches
                # when its last step did not run (`FetchState.missed`).
                fetched = True
            if fetching and not ahead_run:
                if not run.loop_length:
                    planned = 1
                steps_run, logs, fetched = self._run_then_fetch(
                    fused, one_step, kind, iterator, plan, planned, shared_for
                )
            elif not fetching:
                steps_run, logs = plain_run(iterator, planned, plans_training and run.fuses_run_end)
            steps_run = int(steps_run)
            nan_step = logs.pop(NAN_STEP_KEY, None)
            run.nan_loss_step = None if nan_step is None or nan_step < 0 else int(nan_step)
            if not fetched and run.nan_loss_step is not None:
                # A NaN loss ended the run at its step, before the step that
                # fetches: the hooks see the NaN step, with nothing fetched.
                run.fetches.results = {}
                run.fetches.missed = fetched = True
            # Hooks that asked for values see no run when the input ended
            # before the step that fetches them (as a TPUEstimator loop
            # ending in OutOfRange ran no after_run).
            run.last_run_steps = steps_run if fetched else 0
            run.record(steps_run, logs)
            if steps_run == 0:
                self._stop(kind)
                return last_logs
            last_logs = logs
            # A run that a NaN loss ended is not the input's end: the hooks
            # decide (the NaN check raises, or stops training gracefully).
            ended = steps_run < planned and run.nan_loss_step is None
            if ended or self._plans_no_step(run):
                self._stop(kind)
            return logs

        return function


class _EagerFirst:
    """A fetching step of the shared trace: its first run eager, then compiled.

    The step's first run calls the shared trace (already a function) on the
    iterator's next element directly; the function that wraps that call with
    the `get_next` (a trace of its own, which captures every variable the
    step reads) is made for the second run. So `train(steps=1)`, a cold
    start, traces nothing around the step. Either way the same traced step
    runs on the next element, on the same executor (`step_call`): the same
    values, summaries and updates.

    Args:
        step: the shared trace's fetching step, a function of one element.
        graph: the shared trace's graph.
        compile: makes the compiled fetching step (a `StepCall`) for an iterator.
    """

    def __init__(
        self, step: Callable[[Any], Any], graph: tf.Graph, compile: Callable[[Any], Any]
    ) -> None:
        self._step = step
        self._compile = compile
        self._compiled: Any = None
        self._ran = False
        self._single_threaded = step_call.allows_single_thread(graph)

    @property
    def compiles_next(self) -> bool:
        """Whether its next run compiles the step (it ran once, eagerly)."""
        return self._ran and self._compiled is None

    @property
    def single_threaded(self) -> bool:
        """Whether the step runs on the single-threaded executor."""
        if self._compiled is not None:
            return bool(self._compiled.single_threaded)
        return self._single_threaded

    def __call__(self, iterator: Any) -> Any:
        if self._ran:
            if self._compiled is None:
                self._compiled = self._compile(iterator)
            return self._compiled(iterator)
        self._ran = True
        element = iterator.get_next()
        outputs, self._single_threaded = step_call.call_on_one_thread(
            self._step, element, single_threaded=self._single_threaded
        )
        return outputs


def fetch_plan_key(plan: _fetches.FetchPlan) -> tuple[Any, ...]:
    """What tells one fetching step from another: the keys and the variables fetched."""
    return (tuple(plan.keys), tuple(id(v) for v in plan.variables.values()))


def fetching_step(
    trace: ModelFnTrace,
    one_step: Callable[[Any], dict[str, Any]],
    plan: _fetches.FetchPlan,
    shared: Callable[[Any], dict[str, Any]] | None = None,
) -> Callable[[Any], dict[str, Any]]:
    """The fetching step: one step on an iterator's next element, whose logs
    also hold what `plan` fetches (under `FETCHES_KEY`).

    One machine's train and test functions and the parameter-server workers'
    scheduled steps are built from it alike; each caller compiles and caches
    it per `fetch_plan_key` (and input).

    Args:
        trace: the model_fn's trace; `one_step` is traced fetching `plan`.
        one_step: the step of one element (over the replicas), returning its logs.
        plan: the hooks' fetches.
        shared: a step of one shared trace that already returns the fetches
            (one machine's training, `_SharedStep`); used instead when given.
    """

    def step_with_fetches(iterator: Any) -> dict[str, Any]:
        if shared is not None:
            return shared(iterator.get_next())
        with trace.tracing_fetches(plan):
            return one_step(iterator.get_next())

    return step_with_fetches


def _input_used_up(run: RunState) -> bool:
    """Whether the steps run have read every batch of an input of known length.

    Keras' `fit` then calls the train function no more, as after as many runs
    of one step each; without this a run of several steps that ends with the
    input would be followed by one that runs none (its hooks' before_run
    called for nothing).
    """
    if not run.epoch_iterators:
        return False
    batches = run.epoch_iterators[-1].num_batches
    return bool(batches) and run.steps_run >= batches


def shares_one_trace(strategy: tf.distribute.Strategy) -> bool:
    """Whether a step traced once serves every compiled function under `strategy`.

    So on one device, on the replicas of one machine (`OneDeviceStrategy`,
    `MirroredStrategy`) and on each worker of `MultiWorkerMirroredStrategy`:
    the step is traced once, each replica calling the model_fn once in it.
    Every function of a worker keeps the trace's collectives (pruning leaves
    out summary writes only) and binds their instance keys when it runs, so
    the workers' collectives still match whatever each one fetches.
    """
    if isinstance(
        strategy,
        (
            tf.distribute.OneDeviceStrategy,
            tf.distribute.MirroredStrategy,
            tf.distribute.MultiWorkerMirroredStrategy,
        ),
    ):
        return True
    return _is_default_strategy(strategy)


def _is_default_strategy(strategy: tf.distribute.Strategy) -> bool:
    """Whether `strategy` is TensorFlow's default one (no distribution)."""
    with strategy.scope():
        return not tf.distribute.has_strategy()


def _optional_batch(element: Any, produce: Callable[[Any], Any], made: list[Any]) -> Any:
    """`produce`'s result on an input element, as an Optional: empty once the input ended.

    `made` keeps the Optional's spec from the branch that produces it (traced
    first), for the empty branch.
    """

    def present() -> Any:
        optional = tf.experimental.Optional.from_value(produce(element.get_value()))
        made[:] = [optional.element_spec]
        return optional

    return tf.cond(
        element.has_value(), present, lambda: tf.experimental.Optional.empty(made[0])
    )


def _reduce_batch(strategy: tf.distribute.Strategy, value: Any) -> Any:
    if strategy.num_replicas_in_sync == 1:
        return strategy.experimental_local_results(value)[0]
    return tf.concat(strategy.experimental_local_results(value), axis=0)


def _fetches_for_one_step(run: RunState, plan: _fetches.FetchPlan) -> bool:
    """Whether the hooks fetch for a run of one step, as a TF1 session run.

    Not when observers are served at every step of a longer run
    (`plan.every_step`) or fetch at its last step (`run.fetches.run_steps`).
    """
    return not plan.every_step and run.fetches.run_steps <= 1


def _reduce(
    strategy: tf.distribute.Strategy,
    value: Any,
    reduction: tf.distribute.ReduceOp | None = None,
) -> Any:
    """One value from the replicas: floats by `reduction` (the mean), else the first replica's."""
    local = strategy.experimental_local_results(value)
    if strategy.num_replicas_in_sync == 1 or not local[0].dtype.is_floating:
        return local[0]
    if reduction is None or not isinstance(value, tf.distribute.DistributedValues):
        # One value for all replicas (not per replica) is kept as it is.
        reduction = tf.distribute.ReduceOp.MEAN
    return strategy.reduce(reduction, value, axis=None)


def _reported_loss_reduction(strategy: tf.distribute.Strategy) -> tf.distribute.ReduceOp:
    """How the training loss is reduced over replicas for the logs, as tf.estimator 2.15 did.

    The loss 2.15 logged, returned and summarized (`summaries.collect_loss`
    reduces it so too, inside the model_fn's call).
    """
    with distribute.estimator_loss_scaling(strategy):
        return distribute.reported_loss_reduction(tf.compat.v1.get_default_graph())
