"""The training and evaluation loop: Keras' `fit`/`evaluate` on a ModelFnModel.

There is no loop of our own: `run_training` hands Keras' `fit` the dataset and
a list of callbacks, and the model the call's `RunState`, whose planner tells
each compiled call how many steps it may fuse. A callback that needs to see
the loop at some global step (to log, to save a checkpoint, to stop) says so
through `steps_until_needed`; the plan is the minimum over all of them, so
steps that nothing watches run inside one compiled call.

Callbacks run in list order at each boundary: the loop's own stop-at-step,
then one `HookCallback` with every SessionRunHook, then the user's Keras
callbacks.

With a loop length (`RunConfig.steps_per_loop`, TPUEstimator's
`iterations_per_loop`) every call runs that many steps whatever the hooks
would like, shortened only to stop at the last step; hooks then see the
boundaries between calls, as TPUEstimator's hooks saw its loops. Stop-at-step
callbacks and hooks (`steps_until_stop`) still end training on their step.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.base.protocols import PlansFusion, StopsTraining
from keras_estimator._src.distribute import multi_worker
from keras_estimator._src.engine.run_plan import MAX_FUSED_STEPS, RunState

logger = logging.getLogger("keras_estimator")


class StopAtStep(keras.callbacks.Callback):
    """Stops training once the global step reaches `last_step`."""

    def __init__(self, state: RunState, last_step: int | None) -> None:
        super().__init__()
        self._state = state
        self._last_step = last_step

    def steps_until_needed(self, global_step: int) -> int | None:
        if self._last_step is None:
            return None
        return self._last_step - global_step

    # A loop of fixed length never runs past the last step.
    steps_until_stop = steps_until_needed

    def on_train_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        if self._last_step is not None and self._state.value >= self._last_step:
            self.model.stop_training = True


def plan_steps(
    callbacks: Sequence[Any], global_step: int, loop_length: int | None = None
) -> int:
    """How many steps the next compiled call may run.

    Callbacks that say when they next need a step (`PlansFusion`) bound
    it; a plain Keras callback with batch methods sees every step, as it would
    in `fit`; one without them does not constrain the plan. With a
    `loop_length` only the steps until a callback stops training
    (`StopsTraining`) shorten it.
    """
    return StepPlanner(callbacks, loop_length)(global_step)


class StepPlanner:
    """`plan_steps` over a fixed list of callbacks, sorted out once.

    The loop asks for a plan before and after every compiled call; checking
    each callback against the runtime Protocols on every ask cost more than
    the asking itself. What kind a callback is does not change during a call
    of `fit`, so it is settled when the planner is made.
    """

    def __init__(self, callbacks: Sequence[Any], loop_length: int | None = None) -> None:
        self._asks: list[Callable[[int], int | None]]
        asking: list[Any]
        if loop_length is not None:
            asking = [c for c in callbacks if isinstance(c, StopsTraining)]
            self._asks = [c.steps_until_stop for c in asking]
            self._bound = loop_length
        else:
            asking = [c for c in callbacks if isinstance(c, PlansFusion)]
            self._asks = [c.steps_until_needed for c in asking]
            every_step = any(
                sees_batches(c) for c in callbacks if not isinstance(c, PlansFusion)
            )
            self._bound = 1 if every_step else MAX_FUSED_STEPS
        # The asks that may answer no step at all: a callback declaring
        # `plans_a_step = True` always lets the next call run one.
        self._stop_asks = [
            ask
            for ask, callback in zip(self._asks, asking, strict=True)
            if getattr(callback, "plans_a_step", False) is not True
        ]

    def __call__(self, global_step: int) -> int:
        steps = self._bound
        for ask in self._asks:
            needed = ask(global_step)
            if needed is not None and needed < steps:
                steps = needed
        return max(steps, 0)

    def plans_no_step(self, global_step: int) -> bool:
        """Whether `self(global_step)` is 0, asking only the callbacks that may make it so.

        The loop asks this after every compiled call, and before a call that
        runs one step anyway (one fetching for hooks): only whether it
        should stop matters there.
        """
        if self._bound <= 0:
            return True
        for ask in self._stop_asks:
            needed = ask(global_step)
            if needed is not None and needed <= 0:
                return True
        return False


_BATCH_METHODS = (
    "on_batch_begin",
    "on_batch_end",
    "on_train_batch_begin",
    "on_train_batch_end",
    "on_test_batch_begin",
    "on_test_batch_end",
)


def sees_batches(callback: Any) -> bool:
    """Whether a Keras callback overrides any per-batch method.

    In its class or on the instance: `keras.callbacks.LambdaCallback` sets
    the functions it is given as instance attributes.
    """
    base = keras.callbacks.Callback

    def overridden(name: str) -> bool:
        method = getattr(callback, name, None)
        return getattr(method, "__func__", method) is not getattr(base, name)

    return any(overridden(name) for name in _BATCH_METHODS)


class CallbackDriver:
    """Calls callbacks as Keras' `fit` or `predict` does, for loops Keras does not run.

    Training on one machine is Keras' `fit` itself. The parameter-server
    driver (`ps_training`) and `Estimator.predict`'s loop (`predict_loop`)
    run their batches themselves and call the callbacks through this, in
    Keras' order: in training `on_train_begin`, `on_epoch_begin(0)`, per
    batch `on_train_batch_begin` / `on_train_batch_end`, then
    `on_epoch_end(0)` and `on_train_end`; in prediction `on_predict_begin`,
    the batch pair and `on_predict_end`. A batch that ends no run (its input
    ended, or it was given up) gets no `*_batch_end`, and the next batch
    keeps its number, as in Keras.

    Args:
        callbacks: the `keras.callbacks.CallbackList` to call.
        mode: `"train"` or `"predict"`.
    """

    def __init__(self, callbacks: keras.callbacks.CallbackList, mode: str) -> None:
        if mode not in ("train", "predict"):
            raise ValueError(f"mode must be 'train' or 'predict', got {mode!r}.")
        self._callbacks = callbacks
        self._training = mode == "train"
        self.batch = 0

    def begin(self) -> None:
        if self._training:
            self._callbacks.on_train_begin()
            self._callbacks.on_epoch_begin(0)
        else:
            self._callbacks.on_predict_begin()

    def batch_begin(self) -> None:
        if self._training:
            self._callbacks.on_train_batch_begin(self.batch)
        else:
            self._callbacks.on_predict_batch_begin(self.batch)

    def batch_end(self, logs: dict[str, Any]) -> None:
        if self._training:
            self._callbacks.on_train_batch_end(self.batch, logs)
        elif _unsortable_outputs(logs):
            # Keras' CallbackList flattens the outputs into the logs sorting
            # their keys, which fails on int keys beside str keys: they are
            # flattened here, in the model_fn's order, as predict() yields them.
            flat = {key: _log_value(value) for key, value in logs["outputs"].items()}
            for callback in self._callbacks.callbacks:
                callback.on_predict_batch_end(self.batch, flat)
        else:
            self._callbacks.on_predict_batch_end(self.batch, logs)
        self.batch += 1

    def end(self, logs: dict[str, Any] | None = None) -> None:
        if self._training:
            self._callbacks.on_epoch_end(0, logs)
            self._callbacks.on_train_end(logs)
        else:
            self._callbacks.on_predict_end()


def _unsortable_outputs(logs: dict[str, Any]) -> bool:
    outputs = logs.get("outputs")
    if not isinstance(outputs, dict):
        return False
    try:
        sorted(outputs)
    except TypeError:
        return True
    return False


def _log_value(value: Any) -> Any:
    """A logged value as Keras' callbacks get it: a float if it converts, else numpy."""
    value = keras.ops.convert_to_numpy(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


class FinalizeVariables(keras.callbacks.Callback):
    """Gives the model its final variable values once the steps are done.

    Keras' `fit` calls the optimizer's `finalize_variable_values` after the
    last epoch's `on_epoch_end` and before `on_train_end` (an optimizer with
    `use_ema=True` puts the moving averages into the weights there). This
    callback does the same for the model_fn, last in the list, so the
    Estimator's final checkpoint (saved in `on_train_end`) holds them.
    """

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        finalize = getattr(self.model, "finalize_variable_values", None)
        if finalize is not None:
            finalize()


def run_training(
    model: Any,
    dataset: Any,
    state: RunState,
    callbacks: list[Any],
    loop_length: int | None = None,
    **fit_kwargs: Any,
) -> Any:
    """Trains with Keras' `fit` until a callback stops it or the input ends.

    Both `Estimator.train` and `ModelFnModel.fit` come here; `fit_kwargs` are
    passed on to Keras (e.g. `verbose`). `loop_length`: see the module's
    docstring. `state` is the call's run state (made by the caller, which
    hands it to callbacks that read the step); it is the model's for the
    length of the call.

    Returns:
        Keras' `History`, or None when no step was due.
    """
    state.planner = StepPlanner(callbacks, loop_length)
    state.loop_length = loop_length
    state.fuses_run_end = loop_length is None and _one_device(model)
    options = {"verbose": 0, "shuffle": False, **fit_kwargs}
    if state.planned_steps() == 0:
        return None
    # The base class's fit: ModelFnModel.fit comes here itself.
    with (
        model.running(state),
        multi_worker.explain_cluster_errors(model.distribute_strategy),
        model.reading_input(),
    ):
        return keras.Model.fit(
            model,
            dataset,
            epochs=1,
            callbacks=multi_worker.with_stop_together(
                model, [*callbacks, FinalizeVariables()]
            ),
            **options,
        )


def _one_device(model: Any) -> bool:
    """Whether `model` runs without a distribution strategy."""
    with model.distribute_strategy.scope():
        return not tf.distribute.has_strategy()


def run_evaluation(
    model: Any,
    dataset: Any,
    steps: int | None,
    callbacks: Sequence[Any] = (),
    loop_length: int | None = None,
    state: RunState | None = None,
) -> tuple[dict[str, Any], int]:
    """Evaluates with Keras' `evaluate`; returns the last logs and steps run.

    `state`: the call's run state, when the caller made it for its
    callbacks; a new one otherwise.
    """
    state = state if state is not None else RunState()
    state.planner = StepPlanner(callbacks, loop_length)
    state.training = False
    state.step_limit = steps
    state.loop_length = loop_length
    # The base class's evaluate: a model bound to an Estimator comes here
    # through the Estimator.
    with (
        model.running(state),
        multi_worker.explain_cluster_errors(model.distribute_strategy),
        model.reading_input(),
    ):
        logs = keras.Model.evaluate(
            model,
            dataset,
            verbose=0,
            return_dict=True,
            callbacks=multi_worker.with_stop_together(model, list(callbacks)),
        )
    return logs, state.steps_run
