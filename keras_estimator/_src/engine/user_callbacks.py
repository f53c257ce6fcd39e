"""The user's Keras callbacks in `Estimator.train`, seeing what `fit` shows them.

Keras' `fit` runs a `ModelFnModel`, a model with no layers and no optimizer
of its own. The user's callbacks instead see the Keras model behind the
model_fn (`ModelFnModel.callback_model`): for `model_to_estimator` /
`keras_model_fn`, the Estimator's compiled copy of the user's model, whose
variables are the ones training updates; for a model_fn, a view of its
variables (`callback_model.ModelFnView`). They get `fit`'s params and `fit`'s logs
(the loop's `global_step` key left out), and a stop they ask for through
`model.stop_training` stops the loop. While they run,
`tf.compat.v1.train.get_global_step()` returns the Estimator's global step
variable, as it does in hooks.

`keras.callbacks.TensorBoard` on a model_fn's view writes what it writes in
`fit` where a model_fn has it: weight histograms (from the view's
`layers`), `epoch_learning_rate` (added to its epoch logs here, as Keras
adds it only for a `keras.optimizers.Optimizer`) and, for `write_graph`,
the model_fn's TRAIN graph (where `fit` writes the Keras model's config).

All of them sit in one `UserCallbacks`, at the place of the `callbacks=`
argument in the loop's list, so the dispatch order stays the loop's.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.base.protocols import PlansFusion, StopsTraining
from keras_estimator._src.engine import loop_context
from keras_estimator._src.engine.callback_model import ModelFnView, OptimizerView
from keras_estimator._src.engine.fused_loop import GLOBAL_STEP_KEY
from keras_estimator._src.engine.loop import sees_batches
from keras_estimator._src.engine.run_plan import RunState
from keras_estimator._src.tf_internals import default_graph, keras_tensorboard

logger = logging.getLogger("keras_estimator")


class UserCallbacks(keras.callbacks.Callback):
    """Forwards every callback call to the user's callbacks, in their order.

    Args:
        callbacks: the user's `keras.callbacks.Callback`s.
        state: the call's run state (its step updated when a callback restores the
            model to another step, as `BackupAndRestore` does).
        last_step: the global step the call stops at, if known.
    """

    def __init__(
        self, callbacks: Sequence[Any], state: RunState, last_step: int | None
    ) -> None:
        super().__init__()
        self.callbacks = list(callbacks)
        self._state = state
        self._last_step = last_step
        self._view: Any = None
        self._graph: tuple[Any, tf.Graph] | None = None

    @property
    def stops_on_nan(self) -> bool:
        """Whether a `TerminateOnNaN` (without `raise_error`) is to stop on a NaN loss."""
        return any(
            isinstance(c, keras.callbacks.TerminateOnNaN) and not getattr(c, "raise_error", False)
            for c in self.callbacks
        )

    # ---- what the loop asks -----------------------------------------------------
    def steps_until_needed(self, global_step: int) -> int | None:
        needs = []
        for callback in self.callbacks:
            if isinstance(callback, PlansFusion):
                need = callback.steps_until_needed(global_step)
                if need is not None:
                    needs.append(need)
            elif sees_batches(callback):
                needs.append(1)
        return min(needs) if needs else None

    def steps_until_stop(self, global_step: int) -> int | None:
        stops = [
            steps
            for callback in self.callbacks
            if isinstance(callback, StopsTraining)
            and (steps := callback.steps_until_stop(global_step)) is not None
        ]
        return min(stops) if stops else None

    # ---- model and params ----------------------------------------------------------
    def set_model(self, model: Any) -> None:
        super().set_model(model)
        self._view = _give_model(self.callbacks, model)

    def set_params(self, params: dict[str, Any]) -> None:
        # What `fit(dataset, steps_per_epoch=N, epochs=1)` hands its callbacks.
        steps = None
        if self._last_step is not None:
            steps = self._last_step - self._state.start
        super().set_params(_params(steps))
        for callback in self.callbacks:
            callback.set_params(_params(steps))

    # ---- forwarding ------------------------------------------------------------------
    def _forward(self, method: str, *args: Any) -> None:
        # As Keras' CallbackList calls them: batch methods get `logs` by
        # keyword, the others by position (a LambdaCallback's functions see
        # the difference).
        keyword = "_batch_" in method
        if not self.callbacks:
            # Nothing to forward (the common case, called around every run).
            self._pass_stop()
            return
        with self._step_lookups():
            for callback in self.callbacks:
                if keyword:
                    getattr(callback, method)(*args[:-1], logs=args[-1])
                else:
                    getattr(callback, method)(*args)
        self._pass_stop()

    def _step_lookups(self) -> Any:
        """Where `tf.compat.v1.train.get_global_step()` finds the loop's step."""
        context = loop_context.current()
        if context is None:
            return contextlib.nullcontext()
        if self._graph is None or self._graph[0] is not context.global_step_variable:
            graph = tf.Graph()
            graph.add_to_collection(tf.compat.v1.GraphKeys.GLOBAL_STEP, context.global_step_variable)
            self._graph = (context.global_step_variable, graph)
        return default_graph.lookups_in(self._graph[1])

    def _pass_stop(self) -> None:
        """A stop a callback asked of its model stops the loop."""
        view = self._view
        if view is not None and view is not self.model and getattr(view, "stop_training", False):
            self.model.stop_training = True

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        view = self._view
        if view is not None and view is not self.model:
            view.stop_training = False
        before = _restorable_step(view)
        self._forward("on_train_begin", _fit_logs(logs))
        self._follow_restore(view, before)
        if isinstance(view, ModelFnView):
            self._write_model_fn_graphs()

    def on_train_end(self, logs: dict[str, Any] | None = None) -> None:
        self._forward("on_train_end", _fit_logs(logs))

    def on_epoch_begin(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        self._forward("on_epoch_begin", epoch, _fit_logs(logs))

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        logs = _fit_logs(logs)
        with self._step_lookups():
            for callback in self.callbacks:
                callback.on_epoch_end(epoch, self._tensorboard_logs(callback, logs))
        self._pass_stop()

    # ---- TensorBoard on a model_fn ---------------------------------------------------
    def _tensorboard_logs(self, callback: Any, logs: dict[str, Any] | None) -> dict[str, Any] | None:
        """`logs` with the learning rate TensorBoard writes in `fit`, for a model_fn's view.

        Keras' TensorBoard adds `learning_rate` to its epoch logs only for a
        `keras.optimizers.Optimizer`; a model_fn's optimizer is seen through
        an `OptimizerView`, so the rate is added here.
        """
        view = self._view
        if (
            logs is None
            or not isinstance(callback, keras.callbacks.TensorBoard)
            or not isinstance(view, ModelFnView)
        ):
            return logs
        optimizer = view.optimizer
        rate = optimizer.current_rate() if isinstance(optimizer, OptimizerView) else None
        if rate is None:
            logger.warning(
                "TensorBoard: epoch_learning_rate is not written: %s",
                "the model_fn's training step uses no single optimizer"
                if optimizer is None
                else f"the model_fn's {optimizer.name} computes its learning rate "
                "in the traced step (pass it a variable, a number or a Keras schedule)",
            )
            return logs
        return {**logs, "learning_rate": rate}

    def _write_model_fn_graphs(self) -> None:
        """Writes the model_fn's TRAIN graph for each TensorBoard asked to write the graph.

        In `fit`, `write_graph` writes the Keras model's config; a model_fn
        has none, and its graph is what TensorBoard's Graphs tab can show.
        """
        graph = getattr(self.model, "build_graphs", {}).get(ModeKeys.TRAIN)
        if graph is None:
            return
        for callback in self.callbacks:
            if isinstance(callback, keras.callbacks.TensorBoard) and callback.write_graph:
                with keras_tensorboard.train_writer(callback).as_default():
                    tf.summary.graph(graph)

    # Around every run: with no callbacks there is nothing to forward, and
    # no callback to ask its model to stop (`_pass_stop`).
    def on_train_batch_begin(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        if self.callbacks:
            self._forward("on_train_batch_begin", self._fit_batch(batch, 0), _fit_logs(logs))

    def on_train_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        if self.callbacks:
            self._forward("on_train_batch_end", self._fit_batch(batch, 1), _fit_logs(logs))

    def _fit_batch(self, batch: int, ended: int) -> int:
        """The batch number `fit(steps_per_execution=N)` gives for this run.

        With a loop length each run is N steps, and fit numbers a run by the
        index of its first step at its begin and of its last step at its end
        (1, 3, 5 for N = 2), which `ModelCheckpoint(save_freq=...)` counts
        steps with. Otherwise a callback seeing batches has a run per step.
        """
        state = self._state
        if not state.loop_length:
            return batch
        return state.value - state.start - ended

    def on_test_begin(self, logs: dict[str, Any] | None = None) -> None:
        self._forward("on_test_begin", _fit_logs(logs))

    def on_test_end(self, logs: dict[str, Any] | None = None) -> None:
        self._forward("on_test_end", _fit_logs(logs))

    def on_test_batch_begin(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        self._forward("on_test_batch_begin", batch, _fit_logs(logs) if self.callbacks else logs)

    def on_test_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        self._forward("on_test_batch_end", batch, _fit_logs(logs) if self.callbacks else logs)

    # ---- a callback restoring the model ----------------------------------------------
    def _follow_restore(self, view: Any, before: tuple[int, int] | None) -> None:
        """Moves the global step with a restore made by a callback at train begin.

        `BackupAndRestore` loads the Keras model's weights and optimizer
        state; the global step is not among them. Training steps advance the
        optimizer's `iterations` and the global step together, so the global
        step moves by as much as the restore moved `iterations`. A model_fn's
        view restores the global step itself (it saves it with the weights).
        """
        context = loop_context.current()
        if context is None:
            return
        after = _restorable_step(view)
        step = context.global_step()
        if before is not None and after is not None and after[1] != before[1]:
            step = before[0] + after[1] - before[1]
            context.global_step_variable.assign(step)
        if step != self._state.value:
            self._state.value = step


def _restorable_step(view: Any) -> tuple[int, int] | None:
    """(global step, the Keras optimizer's iterations) now, if both are known."""
    context = loop_context.current()
    optimizer = getattr(view, "optimizer", None)
    iterations = getattr(optimizer, "iterations", None)
    if context is None or iterations is None or not isinstance(optimizer, keras.optimizers.Optimizer):
        return None
    return context.global_step(), int(keras.ops.convert_to_numpy(iterations))


def _fit_logs(logs: dict[str, Any] | None) -> dict[str, Any] | None:
    """The logs `fit` would give: the loop's global step left out."""
    if not logs or GLOBAL_STEP_KEY not in logs:
        return logs
    return {key: value for key, value in logs.items() if key != GLOBAL_STEP_KEY}


def prepare_for_predict(callbacks: Sequence[Any], model: Any) -> None:
    """Gives `predict()`'s callbacks the model and params Keras' `predict` gives.

    The model is the one train() and evaluate() callbacks see (the Keras
    model, or a model_fn's view); the number of batches is not known ahead.
    """
    _give_model(callbacks, model)
    for callback in callbacks:
        callback.set_params(_params(None))


def _give_model(callbacks: Sequence[Any], model: Any) -> Any:
    """Gives each callback the model callbacks see (`model`'s callback view); returns it.

    A model_fn's view first refuses the callbacks it cannot serve.
    """
    view = getattr(model, "callback_model", None)
    view = view() if callable(view) else model
    if isinstance(view, ModelFnView):
        for callback in callbacks:
            _check_for_model_fn(callback, view)
    for callback in callbacks:
        callback.set_model(view)
    return view


def _params(steps: int | None) -> dict[str, Any]:
    """The params Keras' fit (epochs=1) and predict give callbacks."""
    return {"verbose": "auto", "epochs": 1, "steps": steps}


def _check_for_model_fn(callback: Any, view: ModelFnView) -> None:
    """Refuses, before any step, a callback a model_fn's view cannot serve.

    Raises:
        ValueError: with the reason and what to do instead.
    """
    kind = type(callback).__name__
    if isinstance(callback, keras.callbacks.ModelCheckpoint) and not callback.save_weights_only:
        raise ValueError(
            f"ModelCheckpoint(filepath={callback.filepath!r}, save_weights_only=False) "
            "saves a whole Keras model, and a model_fn Estimator has none. Pass "
            "save_weights_only=True with a '.weights.h5' path (the model_fn's "
            "variables, by checkpoint name), or export with "
            "Estimator.export_saved_model."
        )
    if isinstance(callback, keras.callbacks.SwapEMAWeights):
        raise ValueError(
            "SwapEMAWeights swaps a Keras optimizer's moving averages into a Keras "
            "model's weights; a model_fn Estimator has neither. Use "
            "model_to_estimator / keras_model_fn with an optimizer made with "
            "use_ema=True, or keep averages in the model_fn "
            "(tf.train.ExponentialMovingAverage)."
        )
    if isinstance(
        callback,
        (keras.callbacks.LearningRateScheduler, keras.callbacks.ReduceLROnPlateau),
    ):
        optimizer = view.optimizer
        if optimizer is None:
            raise ValueError(
                f"{kind} sets the optimizer's learning rate, but the model_fn's "
                "training step calls apply_gradients (or minimize) of no single "
                "optimizer. Use one optimizer in the TRAIN mode of model_fn, or "
                f"leave out {kind}."
            )
        problem = optimizer.rate_problem()
        if problem is not None:
            raise ValueError(f"{kind}: {problem}")
