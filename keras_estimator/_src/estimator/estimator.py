"""`Estimator`: train, evaluate and predict a model_fn, with model_dir checkpoints.

The Estimator owns the model_dir and the variable store; it wraps the model_fn
once as a `ModelFnModel` and runs every call through Keras' trainer
(`loop`). Variables live across calls; before each call the latest
checkpoint is restored by name only when it is not the one the store already
holds, so repeated `predict()` calls neither retrace nor reload.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from keras_estimator._src.base import fn_args, graph_mode
from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.base.run_config import RunConfig
from keras_estimator._src.base.session_config import (
    apply_session_config,
    default_session_config,
)
from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from keras_estimator._src.checkpoint import model_dir_lock as _model_dir_lock
from keras_estimator._src.checkpoint.warm_start import (
    WarmStartSettings,
    as_settings,
    warm_start,
)
from keras_estimator._src.distribute import multi_worker
from keras_estimator._src.distribute import preemption as _preemption
from keras_estimator._src.engine import input_release, inputs
from keras_estimator._src.engine import loop as _loop
from keras_estimator._src.engine import loop_context as _loop_context
from keras_estimator._src.engine import predict_loop as _predict_loop
from keras_estimator._src.engine import ps_training as _ps_training
from keras_estimator._src.engine.held_values import OpenPredictions
from keras_estimator._src.engine.hook_callback import (
    HookCallback,
    check_hooks,
    observes_only,
)
from keras_estimator._src.engine.model_fn_model import ModelFnModel
from keras_estimator._src.engine.model_fn_state import ModelFnState
from keras_estimator._src.engine.user_callbacks import (
    UserCallbacks,
    prepare_for_predict,
)
from keras_estimator._src.engine.variable_store import GLOBAL_STEP_NAME, VariableStore
from keras_estimator._src.estimator import eval_summary as _eval_summary
from keras_estimator._src.estimator import scaffold_init_fn
from keras_estimator._src.estimator.call_lock import (
    CallLock,
    each_step_one_at_a_time,
    one_at_a_time,
)
from keras_estimator._src.export import saved_model as _export
from keras_estimator._src.hooks import progress as _progress
from keras_estimator._src.hooks import tf_stock_hooks
from keras_estimator._src.hooks.basic_hooks import (
    LoggingTensorHook,
    NanTensorHook,
    StepCounterHook,
)
from keras_estimator._src.hooks.checkpoint_hooks import CheckpointSaverHook
from keras_estimator._src.hooks.hook_variables import HookVariables
from keras_estimator._src.hooks.summary_saver_hook import SummarySaverHook
from keras_estimator._src.tf_internals import (
    checkpoint_initializers,
    collective_keys,
    distribute,
    graph_seeds,
)

logger = logging.getLogger("keras_estimator")


class Estimator:
    """Trains, evaluates and predicts with a TF1-style `model_fn`.

    Args:
        model_fn: `model_fn(features, labels, mode, params, config)` returning
            an `EstimatorSpec`; it may take any subset of those arguments
            (features is required).
        model_dir: where checkpoints go. If None, `config.model_dir`, else a
            new temporary directory.
        config: a `RunConfig`.
        params: a dict passed to model_fn and input_fn as `params`.
        warm_start_from: a `WarmStartSettings`, or the path of a checkpoint,
            a model directory or a SavedModel whose trainable variables
            initialise the model when training starts with no checkpoint in
            model_dir.

    Example:
        >>> est = Estimator(model_fn, model_dir="/tmp/m")  # doctest: +SKIP
        >>> est.train(input_fn, steps=100)  # doctest: +SKIP

    Subclasses: as in tf.estimator 2.15, a subclass may override the
    `model_fn` property (what `add_metrics` wraps) and `latest_checkpoint`
    (the Estimator's own calls find model_dir's newest checkpoint through
    it); every other member of 2.15's Estimator is final, and the
    constructor refuses a subclass whose own body overrides one, as 2.15's
    did. The package's own modules that drive an Estimator read its state
    through `EstimatorInternals`, never through its private attributes.
    """

    def __init__(
        self,
        model_fn: Callable[..., Any],
        model_dir: str | os.PathLike[str] | None = None,
        config: RunConfig | None = None,
        params: dict[str, Any] | None = None,
        warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
    ) -> None:
        _check_not_overridden(type(self))
        graph_mode.check_eager_execution()
        # The config first, then model_fn, in 2.15's order.
        if config is None:
            config = RunConfig()
        elif not isinstance(config, RunConfig):
            raise ValueError(
                "config must be an instance of `RunConfig`, but provided "
                f"{config!r} ({type(config).__name__}). Pass keras_estimator.RunConfig(...)."
            )
        self._model_fn_args = fn_args.validate_model_fn(model_fn)
        if params is not None and not isinstance(params, dict):
            raise TypeError(f"params must be a dict or None, got {type(params).__name__}.")
        if params and "params" not in self._model_fn_args:
            raise ValueError(
                f"model_fn ({model_fn!r}) does not include params argument, but "
                f"params ({params!r}) is passed to Estimator. Add `params` to "
                "model_fn's parameters, or pass no params."
            )
        self._model_dir = _resolve_model_dir(model_dir, config)
        apply_session_config(config.session_config)
        # As in 2.15, the Estimator's config shows the session config it ran
        # with: 2.15's default when none was given.
        self._config = config.replace(
            model_dir=self._model_dir,
            session_config=config.session_config or default_session_config(),
        )
        self._model_fn = model_fn
        self._params = dict(params or {})
        self._warm_start_from = as_settings(warm_start_from)
        self._warm_started = False
        # Held by the thread running a call (see `call_lock`).
        self._calls = CallLock()
        self._hold_variables_under(distribute.as_tf2_strategy(_strategy_of(self._config)))
        self._model: ModelFnModel | None = None
        # evaluate()'s model where it runs without the strategy (`_evaluates_alone`).
        self._eval_model: ModelFnModel | None = None
        # `_checkpoint.identity` of the checkpoint the store holds.
        self._synced_checkpoint: tuple[Any, ...] | None = None
        # Variable name -> checkpoint key the store's values were read under,
        # where not its own name (a Scaffold Saver's var_list in EVAL or
        # PREDICT); None while the store's in-memory values count as any
        # mode's (`latest_checkpoint_held`).
        self._synced_renamed: dict[str, str] | None = {}
        self._predict_function: Any = None
        # predict() generators still open, which keep the values they
        # predict with when a later call changes the variables.
        self._open_predictions = OpenPredictions()
        # The Python values the model_fn read when last called (see
        # `_forget_stale_traces`).
        self._model_fn_state: ModelFnState | None = None

    # ---- properties -----------------------------------------------------------
    @property
    def model_dir(self) -> str:
        return self._model_dir

    @property
    def config(self) -> RunConfig:
        return self._config

    @property
    def params(self) -> dict[str, Any]:
        return dict(self._params)

    @property
    def model_fn(self) -> Callable[..., Any]:
        """The model_fn, called as `model_fn(features, labels, mode, config)`."""
        def public_model_fn(features: Any, labels: Any, mode: str, config: Any) -> Any:
            candidates = {
                "features": features,
                "labels": labels,
                "mode": mode,
                "params": self._params,
                "config": config,
            }
            return self._model_fn(
                **{k: v for k, v in candidates.items() if k in self._model_fn_args}
            )

        return public_model_fn

    # ---- checkpoints ----------------------------------------------------------
    def latest_checkpoint(self) -> str | None:
        """The newest checkpoint prefix in model_dir, or None."""
        return _checkpoint.latest(self._model_dir)

    def get_variable_names(self) -> list[str]:
        """Names of the variables in the latest checkpoint."""
        return _checkpoint.variable_names(self._require_checkpoint())

    def get_variable_value(self, name: str) -> np.ndarray:
        """The value of variable `name` in the latest checkpoint.

        A variable's graph name (`global_step:0`, `v.name`) names it too, as
        in 2.15, whose `tf.train.load_variable` dropped the `:0`.
        """
        if isinstance(name, str) and name.endswith(":0"):
            name = name[:-2]
        return _checkpoint.variable_value(self._require_checkpoint(), name)

    def eval_dir(self, name: str | None = None) -> str:
        """Where evaluate() writes summaries: `eval` or `eval_<name>`."""
        return os.path.join(self._model_dir, "eval" if not name else f"eval_{name}")

    def _require_checkpoint(self) -> str:
        path = self.latest_checkpoint()
        if path is None:
            raise ValueError(
                f"Could not find trained model in model_dir: {self._model_dir!r} "
                "has no checkpoint yet. Train the "
                "Estimator first, or point model_dir at a trained model."
            )
        return path

    # ---- train ----------------------------------------------------------------
    @graph_mode.outside_callers_graph
    @one_at_a_time
    def train(
        self,
        input_fn: Callable[..., Any],
        hooks: Sequence[Any] | None = None,
        steps: int | None = None,
        max_steps: int | None = None,
        saving_listeners: Sequence[Any] | None = None,
        *,
        callbacks: Sequence[Any] | None = None,
        progress: bool | None = None,
    ) -> Estimator:
        """Trains for `steps` more steps, up to `max_steps`, or until input ends.

        Args:
            input_fn: returns a dataset of `(features, labels)`.
            hooks: SessionRunHooks, run after the model_fn's own
                `training_chief_hooks` and `training_hooks`.
            steps: steps to add to the current global step.
            max_steps: the global step to stop at; training is skipped if the
                checkpoint is already there.
            saving_listeners: `CheckpointSaverListener`s called around each
                checkpoint save.
            callbacks: Keras callbacks, called after the hooks at each run.
            progress: show Keras' progress bar (`keras.utils.Progbar`: this
                call's steps, the loss, the time per step and, when `steps`
                or `max_steps` bounds the run, the ETA), updated once per
                fused run; it changes nothing that is trained, fused or
                logged. None (the default): shown only when stdout is a
                terminal or in a notebook; elsewhere, when on, one line at
                the end. An extension of this package.

        Under a `tf.distribute.experimental.ParameterServerStrategy` the chief
        schedules the steps on the cluster's workers (`ps_training`); on a
        ps task, or a worker of a cluster with ps tasks, train serves the
        chief instead and never returns.

        The chief holds model_dir's lock file (`model_dir_lock`) while it
        trains. On SIGTERM in the main thread, training stops after the run
        of steps under way and saves a checkpoint; then the process ends as
        SIGTERM's default handling ends it, or, when the program installed
        a SIGTERM handler, that handler is called and train returns
        (`preemption`). Under MultiWorkerMirroredStrategy every worker stops
        with a signalled one, and train raises RuntimeError on the others.

        Returns:
            self, for chaining.

        Raises:
            ValueError: another trainer holds model_dir's lock.
            TypeError: `progress` is not a bool or None.
            RuntimeError: another worker's SIGTERM stopped training.
        """
        if self._config.task_type == "evaluator":
            # As in 2.15: an evaluator task only evaluates (train() on it ran
            # steps that no checkpoint kept).
            raise ValueError(
                "Train has been called wrong configuration. Please use "
                "tf.estimator.train_and_evaluate which calls proper API according "
                f"to given configuration. This task is the cluster's evaluator "
                f"(TF_CONFIG task type {self._config.task_type!r}), which "
                "evaluates the chief's checkpoints and does not train."
            )
        steps, max_steps = check_steps(steps, max_steps)
        show_progress = _progress.check_progress(progress)
        user_hooks, user_callbacks = _hooks_and_callbacks(hooks, callbacks)
        listeners = _check_listeners(saving_listeners)
        if self._strategy is None and _ps_training.serves_instead_of_training(
            self._config
        ):
            # Parameter-server training: only the chief trains; ps and worker
            # tasks serve it (and never return).
            _ps_training.serve(self._config)
        if multi_worker.writes_to_model_dir(self._config):
            self._ensure_writable()
        # Only the chief writes model_dir; a cluster's workers share it.
        lock = (
            _model_dir_lock.held(self._model_dir)
            if self._config.is_chief
            else contextlib.nullcontext()
        )
        # The lock is released before a SIGTERM under the default handling
        # ends the process (`preemption.on_sigterm`).
        with _preemption.on_sigterm() as preemption, lock:
            self._open_predictions.before_change()
            self._train(
                input_fn,
                steps,
                max_steps,
                user_hooks,
                user_callbacks,
                listeners,
                preemption,
                show_progress,
            )
        if preemption.by_peer:
            raise RuntimeError(
                f"Training stopped at step {preemption.stopped_at}: another worker of "
                "the cluster received SIGTERM (a preemption notice), and every worker "
                "stopped with it; the chief saved that step. train() raises rather "
                "than return a model stopped part way. Start the cluster's tasks "
                "again to resume from the checkpoint."
            )
        return self

    def _train(
        self,
        input_fn: Callable[..., Any],
        steps: int | None,
        max_steps: int | None,
        user_hooks: list[Any],
        user_callbacks: list[Any],
        listeners: list[Any],
        preemption: _preemption.Preemption,
        show_progress: bool = False,
    ) -> None:
        """`train` once the model_dir is this trainer's."""
        self._forget_stale_traces()
        model = self._get_model()
        dataset, element_spec = self._loop_input(input_fn, ModeKeys.TRAIN)
        if self.latest_checkpoint() is None:
            self._seed()
        self._build(model, ModeKeys.TRAIN, element_spec, getattr(dataset, "element_spec", None))
        started_from = self._sync(None, ModeKeys.TRAIN)
        _restart_random_sequences(model, ModeKeys.TRAIN)
        start = int(_checkpoint.current_value(self._store.global_step()).numpy())
        multi_worker.check_same_step(self._strategy, start, self._model_dir)
        if max_steps is not None and start >= max_steps:
            logger.info("Skipping training since max_steps has already saved.")
            return
        last_step = start + steps if steps is not None else max_steps
        state = _loop.RunState(start)
        spec_hooks = _spec_hooks(model, ModeKeys.TRAIN)
        num_chief = model.chief_hook_counts.get(ModeKeys.TRAIN, 0)
        # The model, params and logs fit would give them (user_callbacks).
        keras_callbacks = UserCallbacks(user_callbacks, state, last_step)
        # tf.estimator 2.15's order, at every dispatch point: the chief's
        # checkpoint saver and training_chief_hooks, its step counter and
        # summary saver, then the user's hooks, the NaN check, the loss
        # logger and training_hooks. So a user hook that raises in after_run
        # does so after that step's checkpoint was written.
        # As in 2.15, a CheckpointSaverHook of the program's own (in hooks=,
        # training_hooks or training_chief_hooks) replaces the default one
        # and takes the saving listeners.
        own_savers = [
            hook
            for hook in [*user_hooks, *spec_hooks[num_chief:], *spec_hooks[:num_chief]]
            if isinstance(hook, CheckpointSaverHook)
        ]
        config = self._config
        saves = bool(config.save_checkpoints_steps or config.save_checkpoints_secs)
        if listeners and not own_savers and not saves:
            # As in 2.15: listeners with no checkpoint saver would never run.
            raise ValueError(
                "There should be a CheckpointSaverHook to use saving_listeners. "
                "Please set one of the RunConfig.save_checkpoints_steps or "
                f"RunConfig.save_checkpoints_secs (both are None here), or pass "
                f"a CheckpointSaverHook in hooks; got saving_listeners={listeners!r}."
            )
        chief_hooks, counters = self._default_hooks(
            model, listeners, with_saver=not own_savers
        )
        if own_savers:
            for listener in listeners:
                if listener not in own_savers[0]._listeners:
                    own_savers[0]._listeners.append(listener)
        hooks = [
            *chief_hooks,
            *spec_hooks[:num_chief],
            *counters,
            *user_hooks,
            # A NaN loss stops training gracefully when the user asked
            # keras.callbacks.TerminateOnNaN to stop it.
            NanTensorHook.for_loop(fail_on_nan_loss=not keras_callbacks.stops_on_nan),
            *self._loss_logger(model),
            *spec_hooks[num_chief:],
            *self._added_training_hooks(),
        ]
        loop_callbacks: list[Any] = [
            _loop.StopAtStep(state, last_step),
            HookCallback(hooks),
            keras_callbacks,
            # Reads the step state only: fusion and logs stay as they are.
            *([_progress.ProgressBar(state, last_step)] if show_progress else []),
            _preemption.StopOnSigterm(preemption),
        ]
        with _loop_context.active(self._loop_context(started_from)):
            if _ps_training.is_parameter_server_strategy(self._strategy):
                if self._config.steps_per_loop is not None:
                    logger.warning(
                        "RunConfig.steps_per_loop=%d is ignored under "
                        "ParameterServerStrategy, which schedules runs per worker.",
                        self._config.steps_per_loop,
                    )
                _ps_training.run_training(
                    model, self._store, self._strategy, dataset, state, loop_callbacks
                )
            else:
                _loop.run_training(
                    model,
                    dataset,
                    state,
                    loop_callbacks,
                    loop_length=self._config.steps_per_loop,
                )
        ran = state.value - state.start
        if ran == 0 and not preemption.requested:
            logger.warning(
                "Training with estimator made no steps. Perhaps input is empty or "
                "misspecified."
            )
            warnings.warn(
                "Training with estimator made no steps: input_fn's dataset was "
                "empty. Check input_fn.",
                stacklevel=2,
            )
        if preemption.stops:
            self._save_on_preemption(state.value, preemption)
        # Other workers wait for the chief's last checkpoint before reading it.
        multi_worker.barrier(self._strategy)
        # The program's hooks and callbacks end after the last save, as the
        # user's hooks' end() ran after 2.15's saver; what they assign then
        # is in no checkpoint, so the next call reads the checkpoint again
        # (2.15's next session did) rather than keep the values in memory.
        ends_after_save = bool(user_callbacks) or not all(
            _stock_observer(hook) for hook in [*user_hooks, *spec_hooks]
        )
        self._synced_checkpoint = (
            None if ends_after_save else _checkpoint.identity(self.latest_checkpoint())
        )
        self._synced_renamed = {}
        # As 2.15 printed it: numpy's text of the float32 loss.
        logger.info(
            "Loss for final step: %s.",
            None if state.last_loss is None else np.float32(state.last_loss),
        )

    def _save_on_preemption(self, step: int, preemption: _preemption.Preemption) -> None:
        """Saves `step` unless a hook's `end` already did; says where training stopped."""
        preemption.stopped_at = step
        cause = "SIGTERM" if preemption.requested else "another worker's SIGTERM"
        if not self._config.is_chief:
            logger.warning(
                "Training stopped on %s at step %d; the chief saves the checkpoint.",
                cause,
                step,
            )
            return
        latest = self.latest_checkpoint()
        if latest is None or _checkpoint.step_of(latest) != step:
            policy = _checkpoint.RetentionPolicy(*self._retention(self._get_model()))
            latest = _checkpoint.save(
                self._store.checkpointed(), self._model_dir, step, policy
            )
        logger.warning(
            "Training stopped on %s at step %d; the checkpoint %s was saved.",
            cause,
            step,
            latest,
        )

    def _retention(self, model: ModelFnModel) -> tuple[int | None, float]:
        """(keep_checkpoint_max, keep_checkpoint_every_n_hours) of model_dir.

        As in 2.15, a TF1 Saver the TRAIN EstimatorSpec's Scaffold gives
        sets them in place of RunConfig's.
        """
        saver = model.trace.scaffold_savers.get(ModeKeys.TRAIN)
        if saver is not None:
            return saver.max_to_keep, saver.keep_checkpoint_every_n_hours
        config = self._config
        return config.keep_checkpoint_max, float(config.keep_checkpoint_every_n_hours)

    def _default_hooks(
        self, model: ModelFnModel, listeners: list[Any], with_saver: bool = True
    ) -> tuple[list[Any], list[Any]]:
        """tf.estimator's default chief hooks: (checkpoint saver, counters).

        The checkpoint saver (with the saving listeners) comes first, then
        the step counter and summary saver; other workers of a cluster get
        none of them.
        """
        config = self._config
        if not config.is_chief:
            return [], []
        savers: list[Any] = []
        if with_saver and (config.save_checkpoints_steps or config.save_checkpoints_secs):
            saver = CheckpointSaverHook(
                self._model_dir,
                save_secs=config.save_checkpoints_secs,
                save_steps=config.save_checkpoints_steps,
                listeners=listeners,
            )
            saver.keep_checkpoint_max, saver.keep_checkpoint_every_n_hours = (
                self._retention(model)
            )
            savers.append(saver)
        counters: list[Any] = []
        every = config.log_step_count_steps
        if every:
            counters.append(
                StepCounterHook(every_n_steps=every, output_dir=self._model_dir)
            )
        if config.save_summary_steps:
            counters.append(
                SummarySaverHook(
                    save_steps=config.save_summary_steps,
                    output_dir=self._model_dir,
                    scaffold=_SpecScaffold(model),
                )
            )
        return savers, counters

    def _added_training_hooks(self) -> list[Any]:
        """Hooks a subclass runs after the model_fn's training hooks (none here)."""
        return []

    def _loss_logger(self, model: ModelFnModel) -> list[Any]:
        """The "loss = ..., step = ..." LoggingTensorHook every worker runs."""
        every = self._config.log_step_count_steps
        loss_name = model.loss_names.get(ModeKeys.TRAIN)
        if not (every and loss_name):
            return []
        return [
            LoggingTensorHook(
                {"loss": loss_name, "step": "global_step"}, every_n_iter=every
            )
        ]

    def _loop_context(self, started_from: str | None = None) -> _loop_context.LoopContext:
        """The loop as hooks see it; `started_from`: the checkpoint the call restored."""
        # Variables hooks make in begin() are saved and restored as 2.15's
        # Saver saved all global variables.
        hook_variables = HookVariables(self._store.checkpointed, started_from)
        return _loop_context.LoopContext(
            self._model_dir,
            hook_variables.saveable,
            self._store.global_step(),
            hook_variables.take,
        )

    # ---- evaluate -------------------------------------------------------------
    @graph_mode.outside_callers_graph
    @one_at_a_time
    def evaluate(
        self,
        input_fn: Callable[..., Any],
        steps: int | None = None,
        hooks: Sequence[Any] | None = None,
        checkpoint_path: str | None = None,
        name: str | None = None,
        *,
        callbacks: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        """Evaluates on `steps` batches (or until input ends).

        Returns:
            The eval metrics, `loss` (mean over batches) and `global_step`.
        """
        steps, _ = check_steps(steps, None)
        checkpoint_path = _checkpoint.require_checkpoint(
            _checkpoint.checkpoint_path_argument(checkpoint_path)
        )
        user_hooks, user_callbacks = _hooks_and_callbacks(hooks, callbacks)
        self._forget_stale_traces()
        model = self._get_eval_model()
        dataset, element_spec = self._loop_input(input_fn, ModeKeys.EVAL)
        self._build(model, ModeKeys.EVAL, element_spec, getattr(dataset, "element_spec", None))
        evaluated_path = self._sync(checkpoint_path, ModeKeys.EVAL)
        _restart_random_sequences(model, ModeKeys.EVAL)
        multi_worker.check_same_step(
            None if self._evaluates_alone() else self._strategy,
            int(self._store.global_step().numpy()),
            self._model_dir,
        )
        self._store.reset_local_variables()
        spec_hooks = _spec_hooks(model, ModeKeys.EVAL)
        state = _loop.RunState()
        eval_callbacks = [
            HookCallback([*spec_hooks, *user_hooks]),
            # The model, params and logs Keras' evaluate would give them.
            UserCallbacks(user_callbacks, state, steps),
        ]
        with (
            _loop_context.active(self._loop_context(evaluated_path)),
            _eval_summary.logged_evaluation(),
        ):
            # Nothing sees the batches: the evaluation and its final metric
            # values run in one compiled call (`whole_evaluation`).
            whole = (
                None
                if spec_hooks or user_hooks or user_callbacks or self._strategy is not None
                else model.evaluate_in_one_call(dataset, steps)
            )
            if whole is None:
                logs, ran = _loop.run_evaluation(
                    model, dataset, steps, eval_callbacks, self._config.steps_per_loop, state
                )
            else:
                logs, ran = whole
        if ran == 0:
            warnings.warn(
                "Evaluation made no steps: input_fn's dataset was empty.",
                stacklevel=2,
            )
        if ran and whole is None:
            logs = {**logs, **model.final_metric_values(element_spec)}
        elif not ran:
            # As 2.15's evaluation of no batch: each metric as initialized
            # (0 for means and accuracies), the loss's mean 0.
            logs = {"loss": 0.0, **model.final_metric_values(element_spec)}
        # numpy values of each tensor's dtype, as 2.15's session run gave them.
        specs = model.logs_specs.get(ModeKeys.EVAL, {})
        results = {key: _eval_summary.as_result(value, specs.get(key)) for key, value in logs.items()}
        results["global_step"] = self._store.global_step().numpy()
        if multi_worker.writes_to_model_dir(self._config):
            step = results["global_step"]
            _eval_summary.log_saved_dict({**logs, "global_step": step}, step)
            self._write_eval_summary(results, name, evaluated_path)
        return results

    def _write_eval_summary(
        self, results: dict[str, Any], name: str | None, checkpoint_path: str | None
    ) -> None:
        """Writes the metrics to the eval dir; on a write failure, warns instead.

        The metrics are computed by then: a model_dir that cannot be written
        (read-only, full) costs the summary, not the results.
        """
        eval_dir = self.eval_dir(name)
        try:
            _eval_summary.write_to_directory(
                results, results["global_step"], eval_dir, checkpoint_path
            )
        except (OSError, tf.errors.OpError) as error:
            message = (
                f"The evaluation summary could not be written to {eval_dir!r} "
                f"({type(error).__name__}: {getattr(error, 'message', error)}); the "
                "metrics are returned but TensorBoard and exporters reading "
                "eval events will not see them. Make the directory writable, or "
                "evaluate with an Estimator whose model_dir is writable."
            )
            logger.warning("%s", message)
            warnings.warn(message, stacklevel=3)

    # ---- predict --------------------------------------------------------------
    @graph_mode.outside_callers_graph_each_step
    @input_release.closed_at_exit
    @each_step_one_at_a_time
    def predict(
        self,
        input_fn: Callable[..., Any],
        predict_keys: str | Sequence[str] | None = None,
        hooks: Sequence[Any] | None = None,
        checkpoint_path: str | None = None,
        yield_single_examples: bool = True,
        *,
        callbacks: Sequence[Any] | None = None,
    ) -> Iterator[Any]:
        """Yields predictions for each example (or each batch) of input_fn.

        Hooks and Keras callbacks see one run per batch, in the order of
        Keras' predict loop (`on_predict_begin`, then per batch
        `on_predict_batch_begin` / `on_predict_batch_end`, then `on_predict_end`).
        """
        checkpoint_path = _checkpoint.require_checkpoint(
            _checkpoint.checkpoint_path_argument(checkpoint_path)
        )
        user_hooks, user_callbacks = _hooks_and_callbacks(hooks, callbacks)
        self._forget_stale_traces()
        model = self._get_model()
        dataset = self._dataset(input_fn, ModeKeys.PREDICT)
        self._build(model, ModeKeys.PREDICT, dataset.element_spec)
        predicted_from = self._sync(checkpoint_path, ModeKeys.PREDICT)
        held = self._open_predictions.open(list(self._store.saveable().values()))
        _restart_random_sequences(model, ModeKeys.PREDICT)
        if self._predict_function is None:
            self._predict_function = model.make_predict_function()
        spec_hooks = _spec_hooks(model, ModeKeys.PREDICT)
        all_hooks = [*spec_hooks, *user_hooks]
        listeners = keras.callbacks.CallbackList(
            ([HookCallback(all_hooks)] if all_hooks else []) + user_callbacks,
            model=model,
        )
        prepare_for_predict(user_callbacks, model)
        keys = [predict_keys] if isinstance(predict_keys, str) else predict_keys
        # The box holds the only reference to the input iterator, which is
        # freed on the release thread however the caller leaves the generator.
        input_box = [iter(dataset) if self._strategy else inputs.make_iterator(dataset)]
        context = self._loop_context(predicted_from)

        @contextlib.contextmanager
        def scope() -> Iterator[None]:
            with _loop_context.active(context), held.in_place():
                yield

        try:
            yield from _predict_loop.run_prediction(
                model,
                self._predict_function,
                input_box,
                listeners,
                keys,
                yield_single_examples,
                scope,
            )
        finally:
            self._open_predictions.close(held)
            input_release.release(input_box)

    # ---- export ---------------------------------------------------------------
    def export_saved_model(
        self,
        export_dir_base: str | bytes | os.PathLike[str],
        serving_input_receiver_fn: Callable[[], Any] | None,
        assets_extra: dict[str, str] | None = None,
        as_text: bool = False,
        checkpoint_path: str | None = None,
        experimental_mode: str = ModeKeys.PREDICT,
    ) -> bytes:
        """Exports the serving graph and a checkpoint's values as a SavedModel.

        The serving_input_receiver_fn and the model_fn (PREDICT mode) are
        traced together; variables take the values of `checkpoint_path` (or
        the latest checkpoint). Each entry of the EstimatorSpec's
        `export_outputs` becomes a signature under its key (default: the
        predictions as `serving_default`), plus `<alternative>:<key>` for
        each receiver tensors alternative, with the method names TensorFlow
        Serving expects. The SavedModel loads with `tf.saved_model.load`,
        without this package.

        Args:
            export_dir_base: the export is written to
                `<export_dir_base>/<timestamp>`.
            serving_input_receiver_fn: a function of no arguments returning a
                `keras_estimator.export.ServingInputReceiver` or
                `TensorServingInputReceiver`.
            assets_extra: a dict of destination path (relative to
                `assets.extra/`) -> source file to copy there.
            as_text: write `saved_model.pbtxt` instead of `saved_model.pb`.
            checkpoint_path: the checkpoint to export; None for the latest.
            experimental_mode: only `ModeKeys.PREDICT` can be exported.

        Returns:
            The export directory, as bytes.

        Raises:
            ValueError: no receiver fn or no checkpoint, or bad receivers or
                export outputs.
            NotImplementedError: `experimental_mode` is TRAIN or EVAL.
        """
        if not serving_input_receiver_fn:
            raise ValueError(
                "An input_receiver_fn must be defined: pass a "
                "serving_input_receiver_fn returning a ServingInputReceiver."
            )
        return self.experimental_export_all_saved_models(
            export_dir_base,
            {experimental_mode: serving_input_receiver_fn},
            assets_extra=assets_extra,
            as_text=as_text,
            checkpoint_path=checkpoint_path,
        )

    @graph_mode.outside_callers_graph
    @one_at_a_time
    def experimental_export_all_saved_models(
        self,
        export_dir_base: str | bytes | os.PathLike[str],
        input_receiver_fn_map: dict[str, Callable[[], Any]],
        assets_extra: dict[str, str] | None = None,
        as_text: bool = False,
        checkpoint_path: str | None = None,
    ) -> bytes:
        """Exports a SavedModel for the modes in `input_receiver_fn_map`.

        Only `ModeKeys.PREDICT` (the serving graph, as in
        `export_saved_model`) can be exported; TRAIN and EVAL raise
        NotImplementedError.

        Returns:
            The export directory, as bytes.
        """
        checkpoint_path = _checkpoint.checkpoint_path_argument(checkpoint_path)
        latest = self.latest_checkpoint()
        path = _export.resolve_checkpoint(
            checkpoint_path,
            latest,
            self._model_dir,
            self._warm_start_from.ckpt_to_initialize_from
            if self._warm_start_from
            else None,
        )

        def export(chosen: str) -> bytes:
            return _export.export_all_saved_models(
                self._get_model().trace,
                multi_worker.private_export_base(self._config, export_dir_base),
                input_receiver_fn_map,
                chosen,
                assets_extra=assets_extra,
                as_text=as_text,
            )

        if checkpoint_path is None and path == latest:
            # The latest checkpoint may be deleted by a trainer's retention
            # before it is read: then the newest one is exported.
            return _checkpoint.reading_newest(self._model_dir, export, chosen=path)
        return export(path)

    @property
    def export_savedmodel(self) -> Callable[..., bytes]:
        """Deprecated alias of `export_saved_model` (tf.compat.v1's signature).

        Called as `export_savedmodel(export_dir_base,
        serving_input_receiver_fn, assets_extra=None, as_text=False,
        checkpoint_path=None, strip_default_attrs=False)`; `strip_default_attrs`
        has no effect (TF2's SavedModel writer decides).
        """

        def export_savedmodel(
            export_dir_base: str | bytes | os.PathLike[str],
            serving_input_receiver_fn: Callable[[], Any],
            assets_extra: dict[str, str] | None = None,
            as_text: bool = False,
            checkpoint_path: str | None = None,
            strip_default_attrs: bool = False,
        ) -> bytes:
            warnings.warn(
                "Estimator.export_savedmodel is deprecated: use export_saved_model.",
                DeprecationWarning,
                stacklevel=2,
            )
            return self.export_saved_model(
                export_dir_base,
                serving_input_receiver_fn,
                assets_extra=assets_extra,
                as_text=as_text,
                checkpoint_path=checkpoint_path,
            )

        return export_savedmodel

    # ---- internals ------------------------------------------------------------
    def _get_model(self, model_class: type[ModelFnModel] = ModelFnModel) -> ModelFnModel:
        if self._model is None:
            # Made in the strategy's scope, the model runs its steps on every
            # replica (`model.distribute_strategy`). A parameter-server chief
            # schedules train steps itself and evaluates locally: no scope.
            strategy = self._strategy
            if _ps_training.is_parameter_server_strategy(strategy):
                strategy = None
            self._model = self._new_model(strategy, model_class)
        return self._model

    def _new_model(
        self, strategy: tf.distribute.Strategy | None, model_class: type[ModelFnModel]
    ) -> ModelFnModel:
        """A compiled model of the model_fn over the store, in `strategy`'s scope if any."""
        with strategy.scope() if strategy else contextlib.nullcontext():
            model = model_class(
                self._model_fn, self._model_fn_args, self._params, self._config, self._store
            )
            model.compile(optimizer=None, jit_compile=False, steps_per_execution=1)
        return model

    def _hold_variables_under(self, strategy: Any) -> None:
        """Makes `strategy` (None: none) the one every mode's variables live under."""
        self._strategy = strategy
        # Two MirroredStrategy objects share collective keys; see the module.
        collective_keys.own_keys(strategy)
        self._store = VariableStore(strategy)

    def _build(self, model: Any, mode: str, element_spec: Any, loop_spec: Any = None) -> None:
        """Traces `mode`'s step if needed; records what its model_fn read.

        The record is what `_forget_stale_traces` compares at the next call.
        """
        model.build_mode(mode, element_spec, loop_spec)
        self._model_fn_state = ModelFnState.of(self._model_fn)

    def _forget_stale_traces(self) -> None:
        """Drops the traces when a Python value the model_fn read has changed,
        or when its EstimatorSpec gave hooks that may keep state.

        tf.estimator 2.15 called the model_fn on every call, so a value it
        took from Python (`LEARNING_RATE`, `FLAGS.lr`, a closure variable)
        changed between calls took effect, and its hooks were new objects.
        The traces here outlive a call; in those cases the next call builds
        new ones, calling the model_fn again. The variables stay in the store.
        """
        state = self._model_fn_state
        change = state.changed() if state is not None else None
        if change is not None:
            logger.info(
                "Calling model_fn again: a value it reads changed since its last call (%s).",
                change,
            )
        elif not self._holds_hooks_with_state():
            return
        self._model = None
        self._eval_model = None
        self._predict_function = None
        self._model_fn_state = None

    def _holds_hooks_with_state(self) -> bool:
        """Whether a trace kept a hook its model_fn made that may keep state.

        tf.estimator 2.15 called the model_fn on every call, so the hooks its
        EstimatorSpec returned were new objects each time: a hook counting
        its runs from `__init__`, or one keeping the last loss it saw, started
        afresh. Reusing a trace would run the previous call's objects. Only
        hook classes that declare every run's state reset in `begin()`
        (`resets_in_begin`, not inherited) are reused with the trace.

        Not across the workers of a `MultiWorkerMirroredStrategy`: they must
        trace together, and a chief's hooks are not a worker's
        (docs/differences.md).
        """
        if multi_worker.is_multi_worker(self._strategy):
            return False
        for model in (self._model, self._eval_model):
            if model is None:
                continue
            for hooks in model.spec_hooks.values():
                if any(not vars(type(hook)).get("resets_in_begin", False) for hook in hooks):
                    return True
        return False

    def _evaluates_alone(self) -> bool:
        """Whether evaluate() runs without the strategy, as tf.estimator 2.15's did.

        2.15 distributed evaluation only when `eval_distribute` was set; with
        a `MirroredStrategy` as `train_distribute` alone it evaluated on one
        device: one model_fn call, one batch per step (`evaluate(steps=N)`
        read N batches, not N per replica). With a
        `MultiWorkerMirroredStrategy` each task evaluated so, on its own: its
        input_fn called without an `input_context`, the first N batches of
        its whole input. The variables stay the strategy's.
        """
        return self._config.eval_distribute is None and isinstance(
            self._strategy,
            (tf.distribute.MirroredStrategy, tf.distribute.MultiWorkerMirroredStrategy),
        )

    def _get_eval_model(self) -> ModelFnModel:
        """The model evaluate() runs: the Estimator's, or one made outside the strategy."""
        if not self._evaluates_alone():
            return self._get_model()
        if self._eval_model is None:
            self._eval_model = self._new_model(None, ModelFnModel)
        return self._eval_model

    def _dataset(
        self,
        input_fn: Callable[..., Any],
        mode: str,
        input_context: tf.distribute.InputContext | None = None,
    ) -> tf.data.Dataset:
        """input_fn's dataset: every mode and input pipeline makes it here."""
        return inputs.make_dataset(
            input_fn, mode, self._params, self._config, input_context=input_context
        )

    def _loop_input(self, input_fn: Callable[..., Any], mode: str) -> tuple[Any, Any]:
        """The train/eval loop's input and the spec of one replica's element.

        Raises:
            ValueError: input_fn gives labels and model_fn takes no `labels`
                (tf.estimator 2.15 refused these too, rather than drop them).
        """
        dataset, element_spec = self._make_loop_input(input_fn, mode)
        labels = inputs.split_element(element_spec)[1]
        gives_labels = labels is not None and type(labels).__name__ != "NoneTensorSpec"
        if gives_labels and "labels" not in self._model_fn_args:
            name = getattr(self._model_fn, "__name__", repr(self._model_fn))
            raise ValueError(
                f"model_fn does not take labels, but input_fn returns labels. The "
                f"model_fn `{name}` takes {list(self._model_fn_args)}; input_fn "
                f"gave (features, labels) with labels {labels!r} for {mode}. Add a "
                "`labels` parameter to model_fn, or have input_fn return the "
                "features only."
            )
        return dataset, element_spec

    def _make_loop_input(self, input_fn: Callable[..., Any], mode: str) -> tuple[Any, Any]:
        """The train/eval loop's input and the spec of one replica's element.

        With several replicas, input_fn is called once per input pipeline
        (worker), with a `tf.distribute.InputContext` when it takes
        `input_context`, and each element is one replica's batch, as
        tf.estimator's `make_input_fn_iterator` had it. Under parameter
        servers the TRAIN input is made on each worker (`ps_training`).
        """
        strategy = self._strategy
        if mode == ModeKeys.EVAL and self._evaluates_alone():
            strategy = None
        if mode == ModeKeys.TRAIN and _ps_training.is_parameter_server_strategy(strategy):
            return _ps_training.per_worker_input(
                strategy,
                lambda context: self._dataset(input_fn, mode, context),
            )
        one_replica = strategy is not None and strategy.num_replicas_in_sync == 1
        mirrored = isinstance(strategy, tf.distribute.MirroredStrategy)
        if strategy is None or (one_replica and not mirrored):
            dataset = self._dataset(input_fn, mode)
            return dataset, dataset.element_spec
        options = None
        if one_replica:
            # One Mirrored replica reads as if there were no strategy. The
            # default (a multi-device iterator prefetching through a
            # generator) costs about a small model's step for every batch.
            options = tf.distribute.InputOptions(
                experimental_fetch_to_device=False,
                experimental_replication_mode=tf.distribute.InputReplicationMode.PER_REPLICA,
            )
        made: list[tf.data.Dataset] = []

        def dataset_fn(context: tf.distribute.InputContext) -> tf.data.Dataset:
            dataset = self._dataset(input_fn, mode, context)
            dataset = multi_worker.shard_by_policy(dataset, input_fn, context)
            made.append(dataset)
            return dataset

        distributed = strategy.distribute_datasets_from_function(dataset_fn, options)
        return distributed, made[0].element_spec

    def _seed(self) -> None:
        seed = self._config.tf_random_seed
        if seed is not None:
            graph_seeds.set_process_seed(seed)

    def _sync(self, checkpoint_path: str | None, mode: str) -> str | None:
        """Loads the wanted checkpoint into the store unless already there.

        Returns:
            The path of the checkpoint the store holds, or None without one.
        """
        new_names = self._store.pop_new_names()
        path = checkpoint_path or self.latest_checkpoint()
        model = self._get_eval_model() if mode == ModeKeys.EVAL else self._get_model()
        if path is None:
            # Before warm starting, as 2.15 ran warm_start after the model_fn.
            checkpoint_initializers.restore_recorded(
                model.trace.checkpoint_initializers,
                {name: self._store.get(name) for name in new_names},
            )
            if mode != ModeKeys.TRAIN:
                logger.info(
                    "Could not find trained model in model_dir: %s, running "
                    "initialization to %s.",
                    self._model_dir,
                    "predict" if mode == ModeKeys.PREDICT else "evaluate",
                )
            if self._warm_start_from:
                # In every mode, as 2.15 warm-started each call's new graph.
                self._warm_start(new_names)
            init_op = model.trace.scaffold_init_ops.get(mode)
            # Not on the weights being trained (`latest_checkpoint_held`): 2.15's
            # in-memory evaluation fed them over whatever its init_op assigned.
            if init_op is not None and self._synced_renamed is not None:
                # After the initializers and the warm start, before init_fn,
                # as 2.15's session creation ran it.
                self._open_predictions.before_change()
                scaffold_init_fn.run_init_op(init_op)
            scaffold = model.trace.scaffold_init_fns.get(mode)
            if scaffold is not None:
                # After the initializers and the warm start, as 2.15's
                # session creation ran it.
                self._open_predictions.before_change()
                scaffold_init_fn.run_init_fn(scaffold)
            return None
        saveable = self._store.saveable()
        # An object-based checkpoint is read through the mode's Scaffold's
        # tf.train.Checkpoint, as 2.15's Scaffold read it; a TF1 Saver's
        # var_list may read variables from other keys (moving averages).
        scaffold_checkpoint = model.trace.scaffold_checkpoints.get(mode)
        saver = model.trace.scaffold_savers.get(mode)
        renamed = saver.renamed() if saver is not None else {}
        # By file identity, not name: a model_dir emptied and trained again
        # holds other values under the same checkpoint name.
        held = [_checkpoint.identity(path)]

        def read(chosen: str) -> str:
            held[0] = _checkpoint.identity(chosen)
            same_values = self._synced_renamed is None or self._synced_renamed == renamed
            if held[0] is not None and held[0] == self._synced_checkpoint and same_values:
                fresh = {n: saveable[n] for n in new_names if n in saveable}
                if fresh:
                    _checkpoint.restore(
                        fresh, chosen, scaffold_checkpoint=scaffold_checkpoint, renamed=renamed
                    )
            else:
                logger.info("Restoring parameters from %s", chosen)
                self._open_predictions.before_change()
                _checkpoint.restore(
                    saveable, chosen, scaffold_checkpoint=scaffold_checkpoint, renamed=renamed
                )
                self._store.tables.restore(chosen)
                self._synced_renamed = renamed
            return chosen

        if checkpoint_path is not None:
            path = read(path)
        elif mode == ModeKeys.TRAIN and (
            held[0] != self._synced_checkpoint or self._synced_renamed
        ):
            # A damaged newest checkpoint: train on from the newest intact
            # one (with a warning), never from step 0.
            logger.info("Restoring parameters from %s", path)
            restored = _checkpoint.restore_or_fall_back(
                saveable, self._model_dir, path, scaffold_checkpoint=scaffold_checkpoint
            )
            self._store.tables.restore(restored)
            self._synced_renamed = {}
            if restored != path:
                held[0] = _checkpoint.identity(restored)
            path = restored
        else:
            # A trainer's retention may delete the chosen checkpoint before it
            # is read: then the newest one is read.
            path = _checkpoint.reading_newest(self._model_dir, read, chosen=path)
        self._synced_checkpoint = held[0]
        return path

    def _warm_start(self, names: list[str]) -> None:
        """Initialises the model from `warm_start_from`, once, before its first use.

        Called when a call (training, evaluation, prediction) starts with no
        checkpoint in model_dir, as 2.15 warm-started each. All the
        store's variables are candidates, not only `names` (those this call
        created): variables an earlier evaluate or predict created belong to
        the training graph tf.estimator warm-started too.
        """
        if self._warm_start_from is not None and not self._warm_started:
            warm_start(self._store.saveable(), self._warm_start_from)
            self._warm_started = True

    def _ensure_writable(self) -> None:
        try:
            tf.io.gfile.makedirs(self._model_dir)
            probe = os.path.join(self._model_dir, ".write_probe")
            with tf.io.gfile.GFile(probe, "w") as handle:
                handle.write("")
            tf.io.gfile.remove(probe)
        except (OSError, tf.errors.OpError) as error:
            raise ValueError(
                f"model_dir {self._model_dir!r} is not writable ({error}). Pass a "
                "model_dir you can write to."
            ) from None


class EstimatorInternals:
    """An Estimator's state, as the package's own collaborators use it.

    Users see only the Estimator's public members; the in-memory evaluator
    (`evaluator_hook`), `add_metrics` (`extenders`) and `model_to_estimator`
    go through this view, so the Estimator's private attributes stay this
    module's to change. A view holds nothing of its own: make one where it
    is needed, `EstimatorInternals(estimator)`.
    """

    def __init__(self, estimator: Estimator) -> None:
        self._estimator = estimator

    @property
    def model_fn(self) -> Any:
        """The model_fn as the Estimator was given it (None on another object).

        `Estimator.model_fn` is a wrapper calling it with the Estimator's
        params; this is the function itself, to recognise what made it.
        """
        return getattr(self._estimator, "_model_fn", None)

    def retention(self) -> tuple[int | None, float]:
        """(keep_checkpoint_max, keep_checkpoint_every_n_hours) of model_dir.

        RunConfig's, or those of the TRAIN Scaffold's TF1 Saver (in a call
        that traced the TRAIN model_fn).
        """
        estimator = self._estimator
        return estimator._retention(estimator._get_model())

    @property
    def warm_start_settings(self) -> WarmStartSettings | None:
        """The Estimator's `warm_start_from`, as its settings object."""
        return self._estimator._warm_start_from

    def model(self, model_class: type[ModelFnModel] = ModelFnModel) -> ModelFnModel:
        """The Estimator's `ModelFnModel`, made on first use (as a `model_class`)."""
        return self._estimator._get_model(model_class)

    @property
    def model_if_made(self) -> ModelFnModel | None:
        """The Estimator's `ModelFnModel`, or None before any call made it."""
        return self._estimator._model

    def eval_scaffold_session_fields(self) -> list[str]:
        """What of `saver` (a TF1 Saver) and `init_fn` the traced EVAL Scaffold gave."""
        trace = self._estimator._get_eval_model().trace
        given = {
            "saver": ModeKeys.EVAL in trace.scaffold_savers,
            "init_fn": ModeKeys.EVAL in trace.scaffold_init_fns,
        }
        return [field for field, is_given in given.items() if is_given]

    def keep_out_of_checkpoints(self, variables: Any) -> None:
        """Saves `variables` in no checkpoint (a Keras metric's made in model_fn).

        The model_fn marks the Keras metrics it returns in `eval_metric_ops`
        so; this marks others, such as one an extender dropped from them.
        """
        self._estimator._store.mark_local(variables)

    def global_step_variable(self) -> tf.Variable | None:
        """The store's global step variable, or None before a trace made it."""
        return self._estimator._store.get(GLOBAL_STEP_NAME)

    @contextlib.contextmanager
    def latest_checkpoint_held(self) -> Iterator[None]:
        """Within: the latest checkpoint counts as the one the store holds.

        Calls then keep the store's (in-memory) values, reading from that
        checkpoint only the variables they create; afterwards the record of
        what the store holds is as before.
        """
        estimator = self._estimator
        saved = estimator._synced_checkpoint, estimator._synced_renamed
        estimator._synced_checkpoint = _checkpoint.identity(estimator.latest_checkpoint())
        estimator._synced_renamed = None
        try:
            yield
        finally:
            estimator._synced_checkpoint, estimator._synced_renamed = saved


# tf.estimator 2.15's Estimator members (both namespaces), less those its
# subclasses could override: `model_fn`, `latest_checkpoint` and private hooks.
_FINAL_MEMBERS = frozenset(
    {
        "_actual_eval", "_actual_train_model_distributed", "_add_meta_graph_for_mode",
        "_assert_members_are_not_overridden", "_call_input_fn", "_call_model_fn",
        "_call_model_fn_eval", "_call_model_fn_eval_distributed",
        "_convert_eval_steps_to_hooks", "_convert_train_steps_to_hooks",
        "_create_global_step", "_evaluate_build_graph", "_evaluate_run",
        "_extract_batch_length", "_extract_keys", "_get_features_and_labels_from_input_fn",
        "_get_features_from_input_fn", "_get_iterator_from_input_fn", "_maybe_warm_start",
        "_tf_docs_inheritable_header", "_train_model", "_train_model_default",
        "_train_model_distributed", "_train_with_estimator_spec",
        "_train_with_estimator_spec_distributed", "_validate_features_in_predict_input",
        "config", "eval_dir", "evaluate", "experimental_export_all_saved_models",
        "export_saved_model", "export_savedmodel", "get_variable_names",
        "get_variable_value", "model_dir", "params", "predict", "train",
    }
)  # fmt: skip


def _check_not_overridden(cls: type) -> None:
    """Refuses a subclass whose own body redefines a member 2.15 made final.

    As 2.15 did: only the instance's own class is read, and a class named
    TPUEstimator (2.15's, the one it let through) and this package's own
    subclasses pass.
    """
    if cls is Estimator or cls.__name__ == "TPUEstimator":
        return
    if cls.__module__.split(".")[0] == __name__.split(".")[0]:
        return
    overridden = sorted(
        name
        for name in _FINAL_MEMBERS & set(vars(cls))
        if getattr(Estimator, name, None) is not vars(cls)[name]
    )
    if overridden:
        raise ValueError(
            "Subclasses of Estimator cannot override members of Estimator. "
            f"{cls} does override {overridden}. Give the subclass's method "
            "another name, or wrap the Estimator instead of subclassing it."
        )


def _resolve_model_dir(
    model_dir: str | os.PathLike[str] | None, config: RunConfig
) -> str:
    given = os.fspath(model_dir) if model_dir is not None else None
    if given is not None and config.model_dir and given != config.model_dir:
        raise ValueError(
            "`model_dir` are set both in constructor and `RunConfig`, but with "
            f"different values. In constructor: {given!r}, in `RunConfig`: "
            f"{config.model_dir!r}. Set only one of them, or make them equal."
        )
    resolved = given or config.model_dir
    if not resolved:
        resolved = tempfile.mkdtemp()
        logger.warning("Using temporary folder as model directory: %s", resolved)
    return resolved


class _SpecScaffold:
    """The TRAIN EstimatorSpec's Scaffold, as the default summary hook reads it.

    As in tf.estimator 2.15, a `summary_op` the model_fn set on its Scaffold is
    what model_dir's summaries hold; unset, the model_fn's summaries are.
    """

    def __init__(self, model: ModelFnModel) -> None:
        self._model = model

    @property
    def summary_op(self) -> Any:
        return self._model.scaffold_summary_ops.get(ModeKeys.TRAIN)


def check_steps(
    steps: Any, max_steps: Any
) -> tuple[int | None, int | None]:
    """`steps` and `max_steps` checked, as whole step counts.

    tf.estimator 2.15 compared them with the global step, so a number that is
    not whole (`steps=len(x) / batch_size`) ran up to the next whole step, and
    `True` counted as 1: the same counts are returned here.
    """
    if steps is not None and max_steps is not None:
        raise ValueError(
            f"Can not provide both steps and max_steps. Got steps={steps} and "
            f"max_steps={max_steps}: steps adds to the current global step, "
            "max_steps is absolute. Pass one."
        )
    counts: list[int | None] = []
    for name, value in (("steps", steps), ("max_steps", max_steps)):
        if value is None:
            counts.append(None)
            continue
        if not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(
                f"{name} must be a number of steps (an int), got {value!r}."
            )
        if not value > 0:
            raise ValueError(f"Must specify {name} > 0, given: {value}.")
        if not math.isfinite(value):
            raise ValueError(
                f"{name}={value} is not a finite number of steps; pass None to "
                "run until the input ends."
            )
        counts.append(int(math.ceil(value)))
    return counts[0], counts[1]


def _check_listeners(listeners: Any) -> list[Any]:
    if listeners is None:
        return []
    if not isinstance(listeners, (list, tuple)) or not all(
        callable(getattr(listener, "after_save", None)) for listener in listeners
    ):
        raise TypeError(
            f"saving_listeners must be a list of CheckpointSaverListener, got "
            f"{listeners!r}."
        )
    return list(listeners)


def _hooks_and_callbacks(hooks: Any, callbacks: Any) -> tuple[list[Any], list[Any]]:
    """The call's hooks and Keras callbacks, checked, as (hooks, callbacks).

    A HookCallback among the callbacks (how Model.fit takes hooks, and a
    model_fn_to_keras model's fit hands its callbacks here) joins the one
    dispatcher: its hooks follow `hooks`, and it leaves the callbacks, since
    a second dispatcher could not add its fetches to the step.
    """
    user_hooks = check_hooks(hooks)
    user_callbacks = _check_callbacks(callbacks)
    for callback in user_callbacks:
        if isinstance(callback, HookCallback):
            user_hooks += callback.hooks
    return (
        tf_stock_hooks.as_package_hooks(user_hooks),
        [c for c in user_callbacks if not isinstance(c, HookCallback)],
    )


def _stock_observer(hook: Any) -> bool:
    """A stock hook of this package declared an observer: it assigns nothing, even in end()."""
    return observes_only(hook) and type(hook).__module__.startswith("keras_estimator.")


def _spec_hooks(model: ModelFnModel, mode: str) -> tuple[Any, ...]:
    """The hooks the model_fn's EstimatorSpec gave for `mode`.

    TensorFlow's own stock hooks among them run as this package's
    (`tf_stock_hooks`).
    """
    return tuple(tf_stock_hooks.as_package_hooks(model.spec_hooks.get(mode, ())))


def _check_callbacks(callbacks: Any) -> list[Any]:
    if callbacks is None:
        return []
    if not isinstance(callbacks, (list, tuple)) or not all(
        isinstance(c, keras.callbacks.Callback) for c in callbacks
    ):
        raise TypeError(
            f"callbacks must be a list of keras.callbacks.Callback, got {callbacks!r}."
        )
    return list(callbacks)


def _strategy_of(config: RunConfig) -> tf.distribute.Strategy | None:
    """The one strategy all modes run under: train_distribute, else eval_distribute.

    The modes share their variables, which belong to one strategy.
    """
    train, evaluate = config.train_distribute, config.eval_distribute
    if train is not None and evaluate is not None and evaluate is not train:
        logger.warning(
            "RunConfig sets both train_distribute and eval_distribute; the "
            "Estimator's variables live under train_distribute, so evaluation "
            "runs under it too."
        )
    return train if train is not None else evaluate


def _restart_random_sequences(model: Any, mode: str) -> None:
    """Seeded random ops of the model_fn begin their sequences again.

    tf.estimator 2.15 ran each train(), evaluate() and predict() call in a
    new graph and session: a seeded random op drew the same values, step
    after step, in every call. Called once the call's input_fn ran, whose
    random ops 2.15 counted before the model_fn's, and the mode was built.
    """
    states = model.trace.random_states
    if states is not None:
        states.restart(mode)
