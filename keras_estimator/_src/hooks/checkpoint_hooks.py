"""CheckpointSaverHook and its listeners, for a loop that may fuse steps.

The hook writes TF1 name-based checkpoints (`model.ckpt-<step>`) of the
running loop's variables (`loop_context.current().saveable()`), so it must
run inside `Estimator.train` or another loop that publishes a LoopContext.
Step-based saving asks the loop (`steps_until_needed`) for a run boundary at
each due step, so checkpoints land on the same steps whether or not steps
are fused; seconds-based saving is checked at every run boundary.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

import tensorflow as tf

from keras_estimator._src.base.session_run_hook import (
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
    SessionStandIn,
)
from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from keras_estimator._src.engine import loop_context
from keras_estimator._src.hooks.basic_hooks import SecondOrStepTimer
from keras_estimator._src.hooks.v1_session import runs_tf_hook_in_v1_sessions

logger = logging.getLogger("keras_estimator")


class CheckpointSaverListener:
    """Acts before and after each checkpoint a CheckpointSaverHook writes.

    `session` arguments are stand-ins (TF2 has no session). `after_save` may
    return True to stop training.
    """

    def begin(self) -> None:
        pass

    def before_save(self, session: Any, global_step_value: int) -> None:
        pass

    def after_save(self, session: Any, global_step_value: int) -> bool | None:
        pass

    def end(self, session: Any, global_step_value: int) -> None:
        pass


@runs_tf_hook_in_v1_sessions
class CheckpointSaverHook(SessionRunHook):
    """Saves checkpoints every N steps or seconds, at the start and at the end.

    Checkpoints are written by the hook itself (TF1 Savers do not exist in
    TF2), keeping the newest `keep_checkpoint_max` (attribute, default 5)
    plus one every `keep_checkpoint_every_n_hours` (default 10000).

    Args:
        checkpoint_dir: directory for the checkpoint files.
        save_secs: save every N seconds (checked at run boundaries).
        save_steps: save every N global steps. Exactly one of the two.
        saver: not supported (must be None).
        checkpoint_basename: the checkpoints' file name before `-<step>`.
        scaffold: not supported (must be None).
        listeners: `CheckpointSaverListener`s called around each save.
        save_graph_def: accepted and ignored: TF2 has no graph to write, so no
            `graph.pbtxt` or `.meta` files are written.
    """

    # At a step whose loss is NaN the loop calls after_run after the NaN
    # check, so a failing check leaves that step unsaved (`SavesCheckpoints`).
    saves_checkpoints = True

    def __init__(
        self,
        checkpoint_dir: str,
        save_secs: float | None = None,
        save_steps: int | None = None,
        saver: Any = None,
        checkpoint_basename: str = "model.ckpt",
        scaffold: Any = None,
        listeners: Sequence[CheckpointSaverListener] | None = None,
        save_graph_def: bool = True,
    ) -> None:
        logger.info("Create CheckpointSaverHook.")
        if (save_secs is None) == (save_steps is None):
            raise ValueError(
                "CheckpointSaverHook needs exactly one of save_secs and save_steps "
                f"(got save_secs={save_secs!r}, save_steps={save_steps!r})."
            )
        # Refused when the loop begins: a TF1 session runs TensorFlow's hook,
        # which saves with them (`v1_session`).
        self._refused: str | None = None
        for name, value in (("saver", saver), ("scaffold", scaffold)):
            if value is not None and self._refused is None:
                self._refused = (
                    f"CheckpointSaverHook({name}=...) is not supported: TF1 Savers "
                    "do not exist in TF2; the hook writes the checkpoints itself "
                    "(TF1 name-based format). Leave saver and scaffold as None."
                )
        self._checkpoint_dir = checkpoint_dir
        self._basename = checkpoint_basename
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._save_graph_def = save_graph_def
        self.keep_checkpoint_max: int | None = 5
        self.keep_checkpoint_every_n_hours: float = 10000.0
        self._context: loop_context.LoopContext | None = None
        self._session: Any = SessionStandIn()
        self._last_seen_step: int | None = None

    def steps_until_needed(self, global_step: int) -> int | None:
        return self._timer.steps_until_trigger(global_step)

    def begin(self) -> None:
        if self._refused is not None:
            raise ValueError(self._refused)
        self._context = loop_context.current()
        if self._context is None:
            raise RuntimeError(
                "CheckpointSaverHook saves an Estimator's variables, and this loop "
                "has none: run it in Estimator.train(hooks=...), or through "
                "HookCallback in the fit of a model made by "
                "keras_estimator.model_fn_to_keras. For a plain Keras model, use "
                "keras.callbacks.ModelCheckpoint or BackupAndRestore."
            )
        self._timer.reset()
        self._last_seen_step = None
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session: Any, coord: Any) -> None:
        if session is not None:
            self._session = session
        step = self._global_step()
        # The checkpoint of the state the loop starts from; a listener's
        # request to stop here is ignored, as in tf.estimator.
        self._save(step)
        self._timer.update_last_triggered_step(step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        step = run_context.global_step
        self._last_seen_step = step
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self._save(step):
                run_context.request_stop()

    def end(self, session: Any) -> None:
        if session is not None:
            self._session = session
        step = self._global_step()
        if step != self._timer.last_triggered_step():
            self._save(step)
            self._timer.update_last_triggered_step(step)
        for listener in self._listeners:
            listener.end(self._session, step)

    def _global_step(self) -> int:
        context = self._context or loop_context.current()
        if context is not None:
            return context.global_step()
        if self._last_seen_step is not None:
            return self._last_seen_step
        raise RuntimeError(
            "CheckpointSaverHook found no running loop; run it inside "
            "Estimator.train or with HookCallback."
        )

    def _save(self, step: int) -> bool:
        """Writes the checkpoint for `step`; True if a listener asks to stop."""
        context = self._context or loop_context.current()
        if context is None:
            raise RuntimeError(
                "CheckpointSaverHook found no running loop; run it inside "
                "Estimator.train or with HookCallback."
            )
        logger.info("Calling checkpoint listeners before saving checkpoint %d...", step)
        for listener in self._listeners:
            listener.before_save(self._session, step)
        policy = _checkpoint.RetentionPolicy(
            self.keep_checkpoint_max, float(self.keep_checkpoint_every_n_hours)
        )
        tf.io.gfile.makedirs(self._checkpoint_dir)
        _checkpoint.save(context.saveable(), self._checkpoint_dir, step, policy, self._basename)
        logger.info("Calling checkpoint listeners after saving checkpoint %d...", step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(self._session, step):
                logger.info(
                    "A CheckpointSaverListener requested that training be stopped. "
                    "listener: %s",
                    listener,
                )
                should_stop = True
        return should_stop
