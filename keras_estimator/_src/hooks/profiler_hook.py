"""`ProfilerHook`: traces single steps with TensorFlow's profiler.

Each traced step is a run of its own; the trace is written under
`output_dir/plugins/profile/<run>/`, where TensorBoard's profile tab finds it.
"""

from __future__ import annotations

import logging
from typing import Any

import tensorflow as tf

from keras_estimator._src.base.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from keras_estimator._src.hooks.basic_hooks import SecondOrStepTimer

logger = logging.getLogger("keras_estimator")


class ProfilerHook(SessionRunHook):
    """Profiles one step every `save_steps` steps or `save_secs` seconds.

    Args:
        save_steps: profile every this many steps (or `save_secs`, not both).
        save_secs: profile every this many seconds.
        output_dir: where traces go (TensorBoard's `--logdir`).
        show_dataflow: kept for compatibility; TF2 traces always include it.
        show_memory: kept for compatibility; TF2 traces include memory when
            the profiler supports it.
    """

    def __init__(
        self,
        save_steps: int | None = None,
        save_secs: float | None = None,
        output_dir: str = "",
        show_dataflow: bool = True,
        show_memory: bool = False,
    ) -> None:
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._output_dir = output_dir or "."
        self._tracing = False
        del show_dataflow, show_memory

    def steps_until_needed(self, global_step: int) -> int | None:
        until = self._timer.steps_until_trigger(global_step + 1)
        # On a clock schedule every step may be the traced one.
        return 1 if until is None else until

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        step = run_context.global_step + 1
        if not self._timer.should_trigger_for_step(step):
            return None
        tf.profiler.experimental.start(self._output_dir)
        self._tracing = True
        # Fetching the global step makes this run a single step.
        return SessionRunArgs("global_step")

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if not self._tracing:
            return
        tf.profiler.experimental.stop()
        self._tracing = False
        self._timer.update_last_triggered_step(run_context.global_step)
        logger.info(
            "Saved a profile of step %d to %s.", run_context.global_step, self._output_dir
        )

    def end(self, session: Any) -> None:
        if self._tracing:
            tf.profiler.experimental.stop()
            self._tracing = False
