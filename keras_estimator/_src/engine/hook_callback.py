"""`HookCallback`: SessionRunHooks run by Keras' callback machinery.

This is the one place hooks are dispatched, whether the loop is
`Estimator.train/evaluate/predict` or a user's `Model.fit/evaluate/predict`.
Keras calls callbacks in list order; within a HookCallback, hooks run in
list order at every point:

    on_*_begin        -> hook.begin(), hook.after_create_session(...)
    on_*_batch_begin  -> hook.before_run(run_context)    (all hooks, then the run)
    on_*_batch_end    -> hook.after_run(run_context, run_values)
    on_*_end          -> hook.end(session)

A Keras "batch" here is one run: one step when any hook fetches values, or
several fused steps when every hook says (through `steps_until_needed`) that
it needs none of them.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.base.protocols import (
    ChecksLoss,
    PlansFusion,
    SavesCheckpoints,
    StopsTraining,
)
from keras_estimator._src.base.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunValues,
    SessionStandIn,
)
from keras_estimator._src.engine import fetches as _fetches
from keras_estimator._src.engine import loop_context, run_alone
from keras_estimator._src.engine.run_plan import FetchState, LoopModel, RunState
from keras_estimator._src.tf_internals import default_graph

_HOOK_METHODS = ("begin", "after_create_session", "before_run", "after_run", "end")


def check_hooks(hooks: Any, name: str = "hooks") -> list[Any]:
    """Validates a list of SessionRunHooks; returns it as a list."""
    if not hooks:  # None, or an empty list, tuple, dict...: as 2.15's `hooks or []`
        return []
    alone = all(callable(getattr(hooks, m, None)) for m in _HOOK_METHODS)
    if alone or isinstance(hooks, (str, bytes)) or not hasattr(hooks, "__iter__"):
        raise TypeError(
            f"{name} must be a list of SessionRunHooks, got {type(hooks).__name__}"
            + (f": pass [{type(hooks).__name__}(...)]." if alone else ".")
        )
    hooks = list(hooks)  # any iterable of hooks, as 2.15 took it
    for hook in hooks:
        missing = [m for m in _HOOK_METHODS if not callable(getattr(hook, m, None))]
        if missing:
            raise TypeError(
                f"Hooks must be a SessionRunHook, given: {hook!r}. "
                f"{name} must contain SessionRunHooks; {hook!r} lacks {missing}. "
                "Subclass keras_estimator.SessionRunHook."
            )
    return hooks


def observes_only(hook: Any) -> bool:
    """Whether `hook` declares that its `after_run` only observes (`ObserverHook`)."""
    return getattr(hook, "observes_only", False) is True


# Graph collections: names of the variables hooks' `begin()` got by
# `tf.compat.v1.get_variable` in that graph, in earlier calls; and of those
# among them that are local (never checkpointed).
_HOOK_VARIABLES = "keras_estimator.hook_variables"
_HOOK_LOCAL_VARIABLES = "keras_estimator.hook_local_variables"
_LOCAL_COLLECTIONS = frozenset(
    {tf.compat.v1.GraphKeys.LOCAL_VARIABLES, tf.compat.v1.GraphKeys.METRIC_VARIABLES}
)


def _model_variable(graph: Any, name: str) -> Any:
    """The variable named `name` in `graph`'s GLOBAL_VARIABLES, or None."""
    for variable in graph.get_collection(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES):
        if getattr(variable, "name", None) == name + ":0":
            return variable
    return None


@contextlib.contextmanager
def _hooks_variables_again(graph: Any) -> Any:
    """Within: a hook's `get_variable` of a name hooks made in an earlier call reuses it.

    tf.estimator 2.15 built a new graph for every train/evaluate/predict
    call, so a hook whose `begin()` made a variable with
    `tf.compat.v1.get_variable` made it again in the next call (and the
    checkpoint gave it its value back). Here a mode's graph lives across
    calls: such a name, made by hooks in an earlier call, is taken up again
    instead of refused as existing. Within one call the usual rules hold (a
    second hook making the same name is refused, as in 2.15).

    Yields:
        A list that holds, on leaving, the global (not local) variables the
        hooks made or took up again, in order: what 2.15's Saver saved.
    """
    earlier = set(graph.get_collection(_HOOK_VARIABLES))
    made = graph.get_collection_ref(_HOOK_VARIABLES)
    local_names = graph.get_collection_ref(_HOOK_LOCAL_VARIABLES)
    got: list[Any] = []

    def reusing(getter: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        # TensorFlow passes `getter` and `name` by keyword.
        if name in earlier:
            kwargs["reuse"] = tf.compat.v1.AUTO_REUSE
        elif kwargs.get("reuse") in (True, tf.compat.v1.AUTO_REUSE):
            # The model's own variable, as 2.15's graph gave it back (the
            # model_fn's trace made it outside this graph's variable store).
            model_variable = _model_variable(graph, name)
            if model_variable is not None:
                return model_variable
        variable = getter(name, *args, **kwargs)
        if name not in earlier and name not in made:
            made.append(name)
        elif name in earlier and name not in local_names:
            got.append(variable)
        return variable

    def recording(next_creator: Callable[..., Any], **kwargs: Any) -> Any:
        variable = next_creator(**kwargs)
        if _LOCAL_COLLECTIONS.intersection(kwargs.get("collections") or ()):
            local_names.append(kwargs.get("name"))
        elif _held_eagerly(variable):
            got.append(variable)
        return variable

    with (
        tf.compat.v1.variable_scope(tf.compat.v1.get_variable_scope(), custom_getter=reusing),
        tf.variable_creator_scope(recording),
    ):
        yield got


def _held_eagerly(variable: Any) -> bool:
    """Whether a variable lives outside any graph (one a checkpoint can hold)."""
    if not isinstance(variable, tf.Variable):
        return False
    try:
        variable.graph  # noqa: B018  (raises for a variable held eagerly)
    except AttributeError:
        return True
    return False


def _variable_values(plan: _fetches.FetchPlan) -> dict[str, Any] | None:
    """The values of `plan`'s fetches when all are variables held eagerly; else None."""
    if not plan.keys or any(key not in plan.variables for key in plan.keys):
        return None
    values = {}
    for key in plan.keys:
        try:
            values[key] = plan.variables[key].numpy()
        except (AttributeError, NotImplementedError, ValueError, TypeError):
            return None  # a variable of a graph, not held eagerly
    return values


class LoopSession(SessionStandIn):
    """The session hooks' `after_create_session()` and `end()` get: `run(fetches)` works.

    In training it runs the TRAIN graph once on the next batch, only for
    `fetches` (`ModelFnModel.fetch_once`), as a TF1 session run at the end
    of training did; fetches that are all variables are read at once, in
    every mode. Other session attributes explain what changed.
    """

    runs_fetches = True

    def __init__(self, run_once: Any) -> None:
        self._run_once = run_once

    def run(
        self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None
    ) -> Any:
        return self._run_once(fetches, feed_dict)


class HookCallback(keras.callbacks.Callback):
    """Runs SessionRunHooks inside Keras `fit`, `evaluate` and `predict`.

    Args:
        hooks: SessionRunHooks (tf.estimator's or `tf.compat.v1.train`'s).

    Example:
        >>> model.fit(data, callbacks=[HookCallback([StopAtStepHook(last_step=50)])])  # doctest: +SKIP
    """

    # `steps_until_needed` and `steps_until_stop` never answer fewer than one
    # step: the loop need not ask them whether to stop (`StepPlanner`).
    plans_a_step = True

    def __init__(self, hooks: Sequence[Any]) -> None:
        super().__init__()
        self._hooks = check_hooks(list(hooks))
        # What each hook is, settled once: checking the runtime Protocols on
        # every run cost a fifth of a step that fetches for a hook.
        self._asks: list[Any] = [
            hook.steps_until_needed if isinstance(hook, PlansFusion) else None
            for hook in self._hooks
        ]
        self._stop_asks = [
            hook.steps_until_stop for hook in self._hooks if isinstance(hook, StopsTraining)
        ]
        self._loss_checkers = [hook for hook in self._hooks if isinstance(hook, ChecksLoss)]
        self._savers = {
            index
            for index, hook in enumerate(self._hooks)
            if isinstance(hook, SavesCheckpoints) and hook.saves_checkpoints is True
        }
        self._observers = [observes_only(hook) for hook in self._hooks]
        self._any_observer = any(self._observers)
        # Hooks that can fetch for the last step of a run of several steps
        # (`fetch_at_run_end`); whether the loop runs them so is settled in
        # `_begin`.
        self._run_end_indices = {
            index
            for index, hook in enumerate(self._hooks)
            if callable(getattr(hook, "fetch_at_run_end", None))
        }
        self._at_run_end = False
        # For the coming run, when it may cover several steps that each fetch
        # (only observers fetch): per hook, whether the run's length leaves
        # it out (it is served at every step instead). None otherwise.
        self._served: list[bool] | None = None
        self._context: SessionRunContext | None = None
        self._plan: _fetches.FetchPlan | None = None
        self._session = SessionStandIn()
        self._global_step = 0
        self._graph: Any = None
        self._mode = "train"
        self._loss_before: tuple[float, float] | None = None
        # The model, when it runs under the loop's `RunState` (a model_fn's);
        # None for a plain Keras model. Settled once per `set_model`.
        self._loop_model: LoopModel | None = None
        # The last run's requests (`_request_signature`) and their plan.
        self._last_plan: tuple[tuple[Any, ...], _fetches.FetchPlan] | None = None

    def set_model(self, model: Any) -> None:
        super().set_model(model)
        self._loop_model = model if isinstance(model, LoopModel) else None

    @property
    def hooks(self) -> list[Any]:
        return list(self._hooks)

    def steps_until_needed(self, global_step: int) -> int | None:
        """The fewest steps any hook lets the next run cover (1 for plain hooks).

        Observers served at every step of the coming run (see
        `_stepwise_observers`) do not shorten it.
        """
        served = self._served
        fewest: int | None = None
        for index, ask in enumerate(self._asks):
            if served is not None and served[index]:
                continue
            if ask is None:
                return 1
            need = ask(global_step)
            if need is not None:
                if served is not None and self._at_run_end and index in self._run_end_indices:
                    # A run of steps that each fetch is replayed step by
                    # step: it must end before the step such a hook fetches.
                    need = int(need) - 1
                need = max(int(need), 1)
                if fewest is None or need < fewest:
                    fewest = need
        return fewest

    def steps_until_stop(self, global_step: int) -> int | None:
        """The fewest steps until a hook stops training (stop-at-step hooks)."""
        fewest: int | None = None
        for ask in self._stop_asks:
            steps = ask(global_step)
            if steps is not None:
                steps = max(int(steps), 1)
                if fewest is None or steps < fewest:
                    fewest = steps
        return fewest

    # ---- the dispatch points -------------------------------------------------
    def _begin(self, mode: str) -> None:
        self._mode = mode
        self._served = None
        self._last_plan = None
        # A run's fetching step may be its last, fused with the steps before
        # it, when training a model_fn under the loop and every hook that
        # fetches can be told so; other hooks that fetch make it a run of
        # its own (`_before_run`).
        run = self._run_state()
        self._at_run_end = (
            mode == "train"
            and bool(self._run_end_indices)
            and run is not None
            and run.training
            and run.fuses_run_end  # one device, in runs the loop plans
        )
        for index in self._run_end_indices:
            self._hooks[index].fetch_at_run_end(self._at_run_end)
        self._global_step = self._read_global_step()
        self._graph = self._hook_graph(mode)
        with (
            self._graph.as_default(),
            _hooks_variables_again(self._graph) as made,
            loop_context.hook_dispatch(),
        ):
            for hook in self._hooks:
                hook.begin()
        context = loop_context.current()
        if made and context is not None and context.take_hook_variables is not None:
            # As 2.15's Saver: saved with the model's, and restored before
            # after_create_session.
            context.take_hook_variables(made)
        session = self._hook_session()
        with self._graph_lookups():
            for hook in self._hooks:
                hook.after_create_session(session, None)

    def _before_run(self) -> None:
        context = SessionRunContext(SessionRunArgs(fetches=None), None)
        context.global_step = self._global_step
        steps = self._run_steps()
        context.run_steps = steps
        with self._graph_lookups():
            requests = [hook.before_run(context) for hook in self._hooks]
            if steps > 1 and any(
                request is not None
                and request.fetches is not None
                and index not in self._run_end_indices
                for index, request in enumerate(requests)
            ):
                # A hook that fetches for the run's first step makes it a
                # run of one step: the others decide again for that step.
                steps = context.run_steps = 1
                requests = [
                    self._hooks[index].before_run(context)
                    if index in self._run_end_indices
                    else request
                    for index, request in enumerate(requests)
                ]
        plan = self._run_fetch_plan(requests)
        self._served = None if steps > 1 else self._stepwise_observers(requests, plan, context)
        plan.every_step = self._served is not None
        if self._loop_model is None:
            wants_loss = any(key.split(":")[0] == "loss" for key in plan.keys)
            self._loss_before = self._loss_totals() if wants_loss else None
        self._context, self._plan = context, plan
        self._set_request(plan if plan.keys else None)
        state = self._fetch_state()
        if state is not None and plan.keys:
            state.run_steps = steps

    def _run_steps(self) -> int:
        """The steps of the coming run, when hooks fetch for its last one (else 1)."""
        run = self._run_state()
        if not self._at_run_end or run is None:
            return 1
        return max(run.planned_steps() or 1, 1)

    def _stepwise_observers(
        self, requests: Sequence[Any], plan: _fetches.FetchPlan, context: SessionRunContext
    ) -> list[bool] | None:
        """Whether the coming run may be several steps that each fetch `plan`.

        It may when training a model_fn in runs the loop plans, every hook
        that fetches is an observer (`observes_only`), the fetches only read
        values (no operations, no summaries) and no hook asked to stop. The
        run's length is then bounded by every other hook, and by observers
        that fetch nothing now but say when they next will; other observers
        are served at every step. Returns, per hook, whether it is one
        served so (leaving the run's length to the others); else None.
        """
        if not plan.keys or not self._any_observer or self._mode != "train":
            return None  # without observers, the hook fetching is not one
        if context.stop_requested:
            return None
        run = self._run_state()
        if run is None or not run.training or not run.in_loop or run.loop_length:
            return None
        for request, observer in zip(requests, self._observers, strict=True):
            if not observer and request is not None and request.fetches is not None:
                return None
        if not plan.only_reads():
            return None
        return [
            observer and (self._asks[index] is None or plan.fetches_of(index) is not None)
            for index, observer in enumerate(self._observers)
        ]

    def _after_run(self, logs: dict[str, Any] | None) -> None:
        context, plan = self._context, self._plan
        if context is None or plan is None:
            return
        run = self._run_state()
        # The loop ends a run at a step whose loss is NaN, and says so.
        nan_step = run.nan_loss_step if run is not None else None
        ran = run is None or run.last_run_steps > 0
        if not ran and nan_step is None:
            return  # the input ended before this run made a step
        stepwise = run.fetches.stepwise if run is not None else None
        if stepwise is not None and plan.every_step:
            self._after_steps(context, plan, stepwise, logs)
            return
        # Only a training step's logs carry the step; evaluation's hold
        # metrics and prediction's the predictions, which may have any key.
        self._global_step = self._read_global_step(logs if self._mode == "train" else None)
        context.global_step = self._global_step
        state = self._fetch_state()
        if state is not None and (state.missed or not ran):
            # The input ended, or a loss was NaN, before the run's last
            # step, which fetches: the steps before it ran, nothing was fetched.
            per_hook: list[Any] = [None] * len(self._hooks)
        else:
            per_hook = plan.results(self._fetched_values(plan, logs))
        if nan_step is None:
            nan_step = self._nan_loss_step(logs, self._global_step)
        self._hooks_after_run(context, range(len(self._hooks)), per_hook.__getitem__, nan_step)
        self._set_request(None)
        self._served = None
        if context.stop_requested:
            self._request_stop()

    def _after_steps(
        self,
        context: SessionRunContext,
        plan: _fetches.FetchPlan,
        stepwise: _fetches.StepwiseValues,
        logs: dict[str, Any] | None,
    ) -> None:
        """Ends a run of several fetching steps as the runs of each step alone.

        Observers get, step by step, `before_run` (from the second step on;
        the first step's came before the run) and `after_run` with that
        step's values and global step; every other hook saw the run begin
        and sees its last step, as in any run of several steps. The loss is
        checked at the last step (a NaN loss ends such a run).
        """
        observers = [index for index, observer in enumerate(self._observers) if observer]
        everyone = range(len(self._hooks))
        last = len(stepwise) - 1
        step_plans: list[Any] = [plan] * len(self._hooks)
        for position, step in enumerate(stepwise.global_steps):
            values = stepwise.step(position)
            if position:
                context = SessionRunContext(SessionRunArgs(fetches=None), None)
                context.global_step = self._global_step
                step_plans = self._observers_before_run(context, observers, plan, values)
            self._global_step = step
            context.global_step = step

            def results_for(index: int, plans: list[Any] = step_plans, at: Any = values) -> Any:
                step_plan = plans[index]
                if step_plan is None:
                    return None
                return step_plan.result_for(index if step_plan is plan else 0, at)

            if position == last:
                # A NaN loss ends such a run: only its last step may have one.
                nan_step = self._nan_loss_step(logs, step)
                self._hooks_after_run(context, everyone, results_for, nan_step)
                break
            with self._graph_lookups():
                for index in observers:
                    hook = self._hooks[index]
                    hook.after_run(context, SessionRunValues(results_for(index), None, None))
                    if context.stop_requested:
                        raise RuntimeError(
                            f"{type(hook).__name__} declares observes_only = True but "
                            f"requested a stop at global step {step}, inside a run "
                            "whose later steps have already run. A hook whose "
                            "after_run may stop training is not an observer: set "
                            "observes_only = False on it."
                        )
        self._set_request(None)
        self._served = None
        if context.stop_requested:
            self._request_stop()

    def _observers_before_run(
        self,
        context: SessionRunContext,
        observers: Sequence[int],
        plan: _fetches.FetchPlan,
        values: dict[str, Any],
    ) -> list[Any]:
        """Calls the observers' `before_run` for a step run already.

        Returns, per hook, the plan that packs its results (the run's own
        for a request like the first step's), or None for no results.
        """
        step_plans: list[Any] = [None] * len(self._hooks)
        with self._graph_lookups():
            for index in observers:
                request = self._hooks[index].before_run(context)
                fetches = None if request is None else request.fetches
                if fetches is None:
                    continue
                if fetches is plan.fetches_of(index) and not request.feed_dict:
                    step_plans[index] = plan
                    continue
                own = self._fetch_plan([request])
                missing = [key for key in own.keys if key not in values]
                if missing:
                    raise RuntimeError(
                        f"{type(self._hooks[index]).__name__} declares observes_only = "
                        f"True but asked at global step {context.global_step} to fetch "
                        f"{missing}, which the first step of its run did not: an "
                        "observer's before_run must fetch the same values at every "
                        "step (or nothing). Set observes_only = False on it."
                    )
                step_plans[index] = own
        return step_plans

    def _hooks_after_run(
        self,
        context: SessionRunContext,
        indices: Sequence[int],
        results_for: Callable[[int], Any],
        nan_step: int | None,
    ) -> None:
        """Calls `after_run` of the hooks at `indices`, in order, checking the loss.

        The loss is checked where tf.estimator 2.15 placed its NanTensorHook,
        at the first hook that checks it for the loop (`ChecksLoss`): at a
        step whose loss is NaN (`nan_step`), the hooks before it (the chief's
        hooks, the user's `hooks=`) see the step end with what they fetched,
        then the check raises `NanLossDuringTrainingError` and the hooks
        after it (the loss logger, the model_fn's `training_hooks`) see
        nothing, as in 2.15. One exception: a checkpoint saver before it
        (`SavesCheckpoints`) sees the step only after the check, so that a
        check that raises leaves the NaN step unsaved (2.15 saved it when a
        save was due). When the check only stops training (it does not
        raise), every hook sees the step.
        """
        hooks = self._hooks
        check_at = None
        if nan_step is not None:
            check_at = next(
                (i for i in indices if isinstance(hooks[i], ChecksLoss) and hooks[i].loop_driven),
                None,
            )
        held: list[int] = []
        with self._graph_lookups():
            for index in indices:
                if check_at is not None and index == check_at:
                    self._check_nan_loss(nan_step)
                    for saver in held:
                        hooks[saver].after_run(
                            context, SessionRunValues(results_for(saver), None, None)
                        )
                elif check_at is not None and index < check_at and index in self._savers:
                    held.append(index)
                    continue
                hooks[index].after_run(context, SessionRunValues(results_for(index), None, None))

    def _nan_loss_step(self, logs: dict[str, Any] | None, step: int) -> int | None:
        """`step` if the run's logged loss is NaN and a hook checks it; else None."""
        if not logs or "loss" not in logs or not self._loss_checkers:
            return None
        return step if math.isnan(float(logs["loss"])) else None

    def _check_nan_loss(self, step: int | None) -> None:
        """Hands a NaN loss at `step` to the hooks that check it (NanTensorHook)."""
        for hook in self._loss_checkers:
            if hook.loop_driven:
                hook.check_loss(math.nan, step)

    def _end(self) -> None:
        session = self._hook_session()
        with self._graph_lookups():
            for hook in self._hooks:
                hook.end(session)

    def _hook_session(self) -> Any:
        """The session `after_create_session()` and `end()` get."""
        if self._can_run_once():
            return LoopSession(self._run_once)
        return LoopSession(self._read_variables)

    def _read_variables(self, fetches: Any, feed_dict: Any = None) -> Any:
        """`session.run(fetches)` where no step can run: variables, and what reads no batch."""
        alone = self._run_alone(fetches, feed_dict)
        if alone is not _NOT_ALONE:
            return alone
        return self._variables_now(fetches)

    def _run_alone(self, fetches: Any, feed_dict: Any) -> Any:
        """`session.run(fetches, feed_dict)` of graph ops that read no batch, run alone.

        As a TF1 session ran an assignment a hook's `begin()` built (in
        `after_create_session`, say): once, on the model's variables. Returns
        `_NOT_ALONE` when nothing of a graph is fetched, or what is reads
        the batch (and nothing is fed).
        """
        flat = tf.nest.flatten(fetches)
        if not feed_dict and all(run_alone.graph_part(f, self._graph) is None for f in flat):
            return _NOT_ALONE
        try:
            with self._graph_lookups():
                return run_alone.run_alone(fetches, feed_dict, self._value_now, self._graph)
        except run_alone.NeedsTheBatch:
            if feed_dict:
                raise
            return _NOT_ALONE

    def _value_now(self, fetch: Any) -> Any:
        if isinstance(fetch, tf.Variable) and run_alone.graph_part(fetch) is not None:
            return fetch.numpy()  # an assignment's result, once it ran: the value now
        return self._variables_now(fetch)

    def _variables_now(self, fetches: Any) -> Any:
        """`session.run(fetches)` of variables alone: their values now."""
        plan = self._fetch_plan([SessionRunArgs(fetches)])
        held = _variable_values(plan)
        if held is None:
            return self._session.run(fetches)  # raises, saying what to do instead
        return plan.results(held)[0]

    def _can_run_once(self) -> bool:
        """Whether hooks may `session.run` the TRAIN graph (in `end()`)."""
        model = self._loop_model
        return self._mode == "train" and model is not None and model.can_fetch_once()

    def _run_fetch_plan(self, requests: Sequence[Any]) -> _fetches.FetchPlan:
        """`_fetch_plan(requests)`, the last run's plan when the hooks asked the same.

        A hook fetching on every step asks for the same objects at every
        step; making its plan again cost a few per cent of a small model's
        step. The same means the same objects (equal strings), in the same
        containers holding the same objects (`_request_signature`).
        """
        signature = _request_signature(requests)
        last = self._last_plan
        if signature is not None and last is not None and _same_requests(last[0], signature):
            return last[1]
        plan = self._fetch_plan(requests)
        self._last_plan = None if signature is None else (signature, plan)
        return plan

    def _fetch_plan(self, requests: Sequence[Any]) -> _fetches.FetchPlan:
        """The hooks' requests as one plan, variables taken from the store.

        A hook made by the model_fn holds the building trace's stand-in of a
        variable; the store's is the one training updates.
        """
        plan = _fetches.FetchPlan(requests)
        model = self._loop_model
        if model is not None:
            for key in plan.variables:
                real = model.store_variable(key.split(":", 1)[1])
                if real is not None:
                    plan.variables[key] = real
        return plan

    def _run_once(self, fetches: Any, feed_dict: Any = None) -> Any:
        """`session.run(fetches)` in `end()`: the TRAIN graph on the next batch.

        What reads no batch runs alone, as in `_read_variables`.
        """
        alone = self._run_alone(fetches, feed_dict)
        if alone is not _NOT_ALONE:
            return alone
        plan = self._fetch_plan([SessionRunArgs(fetches)])
        held = _variable_values(plan)
        if held is not None:
            # Variables alone need no batch: their values now, as a TF1
            # session read them (in after_create_session too).
            return plan.results(held)[0]
        model = self._loop_model
        values = model.fetch_once(plan) if model is not None else None
        if values is None:
            raise tf.errors.OutOfRangeError(
                None,
                None,
                "session.run has no training batch to run on: the input has "
                "ended, or no step has read it yet.",
            )
        return plan.results(values)[0]

    # ---- Keras callback methods ----------------------------------------------
    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        self._begin("train")

    def on_train_batch_begin(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        self._before_run()

    def on_train_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        self._after_run(logs)

    def on_train_end(self, logs: dict[str, Any] | None = None) -> None:
        self._end()

    def on_test_begin(self, logs: dict[str, Any] | None = None) -> None:
        self._begin("eval")

    def on_test_batch_begin(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        self._before_run()

    def on_test_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        self._after_run(logs)

    def on_test_end(self, logs: dict[str, Any] | None = None) -> None:
        self._end()

    def on_predict_begin(self, logs: dict[str, Any] | None = None) -> None:
        self._begin("infer")

    def on_predict_batch_begin(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        self._before_run()

    def on_predict_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        self._after_run(logs)

    def on_predict_end(self, logs: dict[str, Any] | None = None) -> None:
        self._end()

    # ---- talking to the model ----------------------------------------------------
    def _run_state(self) -> RunState | None:
        """The state of the call under way; None for a plain Keras model."""
        model = self._loop_model
        return model.run_state if model is not None else None

    def _fetch_state(self) -> FetchState | None:
        run = self._run_state()
        return run.fetches if run is not None else None

    def _set_request(self, plan: _fetches.FetchPlan | None) -> None:
        state = self._fetch_state()
        if state is not None:
            state.request = plan
            state.results = {}
            state.stepwise = None
            state.run_steps = 1
            state.missed = False

    def _fetched_values(
        self, plan: _fetches.FetchPlan, logs: dict[str, Any] | None
    ) -> dict[str, Any]:
        values = {key: var.numpy() for key, var in plan.variables.items()}
        state = self._fetch_state()
        if state is not None:
            values.update(state.results)
            missing = [key for key in plan.keys if key not in values]
            if missing:
                raise ValueError(
                    f"Hooks asked to fetch {missing}, which this loop cannot fetch "
                    "(prediction hooks can fetch variables only). Return the "
                    "values as predictions instead."
                )
            return values
        # A plain Keras model can only give what its logs hold, and the
        # run's own loss from its loss tracker (its logs hold the mean).
        logs = logs or {}
        run_loss = self._run_loss()
        for key in plan.keys:
            if key in values:
                continue
            name = key.split(":")[0]
            if name == "loss" and run_loss is not None:
                values[key] = run_loss
                continue
            if name not in logs:
                raise ValueError(
                    f"A hook asked to fetch {key!r}, but this Keras model only "
                    f"reports {sorted(logs)} per batch. Fetch one of those names, "
                    "or a variable."
                )
            values[key] = logs[name]
        return values

    def _loss_totals(self) -> tuple[float, float] | None:
        """A plain Keras model's loss tracker: (weighted total, total weight)."""
        if self._loop_model is not None:
            return None
        tracker = next(
            (m for m in getattr(self.model, "metrics", []) if m.name == "loss"), None
        )
        total, count = (getattr(tracker, name, None) for name in ("total", "count"))
        if total is None or count is None:
            return None
        return float(keras.ops.convert_to_numpy(total)), float(keras.ops.convert_to_numpy(count))

    def _run_loss(self) -> float | None:
        """The loss of the run just made, from the tracker's totals around it.

        Keras logs the loss averaged since the epoch began; a TF1 hook
        fetching the loss got the step's. The tracker's weighted sum and
        weight grew by exactly the run's (batch-size weighted) loss.
        """
        before, after = self._loss_before, self._loss_totals()
        if before is None or after is None or after[1] <= before[1]:
            return None
        return (after[0] - before[0]) / (after[1] - before[1])

    def _request_stop(self) -> None:
        self.model.stop_training = True
        self.model.stop_evaluating = True
        self.model.stop_predicting = True

    def _read_global_step(self, logs: dict[str, Any] | None = None) -> int:
        if logs and "global_step" in logs:
            return int(logs["global_step"])
        context = loop_context.current()
        if context is not None:
            return context.global_step()
        optimizer = getattr(self.model, "optimizer", None)
        iterations = getattr(optimizer, "iterations", None)
        return int(iterations.numpy()) if iterations is not None else 0

    def _hook_graph(self, mode: str) -> Any:
        """The graph hooks see: the model's own for `mode` when it has one.

        Its GLOBAL_STEP collection holds the running loop's step variable, so
        `tf.compat.v1.train.get_global_step()` returns the variable training
        advances.
        """
        model = self._loop_model
        graphs = model.build_graphs if model is not None else {}
        graph = graphs.get(mode)
        if graph is None:
            graph = tf.Graph()
        context = loop_context.current()
        if context is not None:
            step_list = graph.get_collection_ref(tf.compat.v1.GraphKeys.GLOBAL_STEP)
            if not any(v is context.global_step_variable for v in step_list):
                step_list[:] = [context.global_step_variable]
        if mode == "train" and model is not None:
            # tf.estimator added the EstimatorSpec's loss to LOSSES in training.
            name = model.loss_names.get(mode)
            losses = graph.get_collection_ref(tf.compat.v1.GraphKeys.LOSSES)
            if name and not any(getattr(t, "name", None) == name for t in losses):
                try:
                    losses.append(graph.get_tensor_by_name(name))
                except (KeyError, ValueError):
                    pass  # a loss that is not a tensor of this graph
        return graph

    def _graph_lookups(self) -> AbstractContextManager[Any]:
        """Where hooks run after begin(): lookups answer from begin()'s graph.

        As in a tf.estimator session, `get_global_step()`, `get_collection`
        and `get_tensor_by_name` find the training graph's objects in every
        hook method; the hook's own operations still run eagerly. (The
        context is returned as it is, not wrapped in a generator of its
        own: it is entered twice per run.)
        """
        graph = self._graph
        if graph is None:
            return contextlib.nullcontext()
        return default_graph.lookups_in(graph)


_CONTAINERS = (dict, list, tuple)
_NOT_ALONE = object()


def _request_signature(requests: Sequence[Any]) -> tuple[Any, ...] | None:
    """What the hooks' requests ask for, to tell a repeated request; None: not comparable.

    Per request: None (nothing fetched), or its fetches and, for a plain
    dict, list or tuple of fetches, a snapshot of its items (a container
    changed in place is then not taken for the same request). Requests with
    feeds, options or nested containers have none.
    """
    signature: list[Any] = []
    for request in requests:
        fetches = None if request is None else request.fetches
        if request is not None and (
            getattr(request, "feed_dict", None) or getattr(request, "options", None) is not None
        ):
            return None
        if fetches is None:
            signature.append(None)
            continue
        kind = type(fetches)
        if kind is dict:
            items: tuple[Any, ...] = tuple(fetches.items())
            values = [value for _, value in items]
        elif kind is list or kind is tuple:
            items = tuple(fetches)
            values = list(items)
        elif isinstance(fetches, _CONTAINERS):
            return None  # a subclass (a namedtuple, an OrderedDict): made anew
        else:
            items = ()
            values = []
        if any(isinstance(value, _CONTAINERS) for value in values):
            return None
        signature.append((fetches, items))
    return tuple(signature)


def _same_object(a: Any, b: Any) -> bool:
    return a is b or (type(a) is str and type(b) is str and a == b)


def _same_requests(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Whether two `_request_signature`s ask for the same objects."""
    if len(a) != len(b):
        return False
    for left, right in zip(a, b, strict=True):
        if left is None or right is None:
            if left is not right:
                return False
            continue
        if not _same_object(left[0], right[0]) or len(left[1]) != len(right[1]):
            return False
        if type(left[0]) is dict:
            if any(
                not _same_object(lk, rk) or not _same_object(lv, rv)
                for (lk, lv), (rk, rv) in zip(left[1], right[1], strict=True)
            ):
                return False
        elif any(
            not _same_object(lv, rv) for lv, rv in zip(left[1], right[1], strict=True)
        ):
            return False
    return True
