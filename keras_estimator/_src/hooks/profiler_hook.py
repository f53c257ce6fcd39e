"""`ProfilerHook`: traces single steps with TensorFlow's profiler.

As in tf.estimator 2.15, the first run of a loop is never traced; then the
run ending at global step `first + save_steps`, and every `save_steps` after
(2.15: `save_steps=3` from step 0 traced steps 3, 6, 9). Each trace is
written as `output_dir/timeline-<step>.json`, a Chrome trace (the file name
and format 2.15 wrote; its events come from TF2's profiler, not from TF1
step stats), and the profiler's own `*.xplane.pb` under
`output_dir/plugins/profile/step_<step>/` for TensorBoard's profile tab.

What a timeline holds differs from 2.15's, which were built from TF1 step
stats: there, one complete event per op of the step (`args`: node name and
op type) under a "<device> Compute" process, plus "<device> Tensors" and
"Allocators" processes; `show_dataflow` added flow events ("s"/"t") from
each tensor's producing op to its consumers, and `show_memory` counter and
object events ("C", "N", "O", "D") for allocations. TF2's profiler records
no step stats: a timeline here holds its host-side events (processes
"/host:CPU" and "Task Environment"; threads for Python, the executor's
`tf_Compute` pool and tf.data; events such as `EagerLocalExecute`,
`ExecutorState::Process`, `Iterator::*`), metadata ("M") and complete ("X")
events only. It has no tensor producers and consumers to draw, and no
allocation records, so `show_dataflow` and `show_memory` change nothing;
`show_memory=True` says so in a warning.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import tensorflow as tf

from keras_estimator._src.base.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from keras_estimator._src.hooks.basic_hooks import SecondOrStepTimer
from keras_estimator._src.hooks.v1_session import runs_tf_hook_in_v1_sessions

logger = logging.getLogger("keras_estimator")


@runs_tf_hook_in_v1_sessions
class ProfilerHook(SessionRunHook):
    """Profiles one step every `save_steps` steps or `save_secs` seconds.

    Args:
        save_steps: profile every this many steps (or `save_secs`, not both).
        save_secs: profile every this many seconds.
        output_dir: where `timeline-<step>.json` files go.
        show_dataflow: accepted; changes nothing (TF2's profiler records no
            tensor producers and consumers to draw flow arrows between).
        show_memory: accepted; changes nothing, and True logs a warning
            (TF2's profiler records no allocations here).
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
        self._tracing: str | None = None
        self._started = False
        self._first_step = 0
        del show_dataflow
        if show_memory:
            logger.warning(
                "ProfilerHook(show_memory=True): the timelines hold no memory "
                "tracks; TensorFlow 2's profiler records no allocations for them. "
                "Use TensorBoard's profile tab (memory profile) on %s/plugins/profile.",
                self._output_dir,
            )

    def begin(self) -> None:
        self._started = False
        self._timer.reset()

    def steps_until_needed(self, global_step: int) -> int | None:
        if not self._started:
            return 1
        until = self._timer.steps_until_trigger(global_step + 1)
        # On a clock schedule every step may be the traced one.
        return 1 if until is None else until

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        if not self._started:
            self._first_step = run_context.global_step
            return None
        if not self._timer.should_trigger_for_step(run_context.global_step + 1):
            return None
        self._tracing = tempfile.mkdtemp(prefix="profile-")
        tf.profiler.experimental.start(self._tracing)
        # Fetching the global step makes this run a single step.
        return SessionRunArgs("global_step")

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        step = run_context.global_step
        if not self._started:
            # 2.15 counted from the step the first run started at.
            self._started = True
            self._timer.update_last_triggered_step(self._first_step)
            return
        if self._tracing is None:
            return
        tf.profiler.experimental.stop()
        self._timer.update_last_triggered_step(step)
        self._save(self._tracing, step)
        self._tracing = None

    def _save(self, logdir: str, step: int) -> None:
        os.makedirs(self._output_dir, exist_ok=True)
        planes = sorted(Path(logdir).glob("plugins/profile/*/*.xplane.pb"))
        timeline = os.path.join(self._output_dir, f"timeline-{step}.json")
        with open(timeline, "w") as f:
            json.dump(_chrome_trace(planes), f)
        run_dir = os.path.join(self._output_dir, "plugins", "profile", f"step_{step}")
        os.makedirs(run_dir, exist_ok=True)
        for plane in planes:
            shutil.move(str(plane), os.path.join(run_dir, plane.name))
        shutil.rmtree(logdir, ignore_errors=True)
        logger.info("Saved a profile of step %d to %s.", step, timeline)

    def end(self, session: Any) -> None:
        if self._tracing is not None:
            tf.profiler.experimental.stop()
            shutil.rmtree(self._tracing, ignore_errors=True)
            self._tracing = None


def _chrome_trace(xplane_files: list[Path]) -> dict[str, Any]:
    """The events of TF2 profiler XSpace files as a Chrome trace.

    One process per plane (device or host), one thread per line, a complete
    ("X") event per profiled event, times in microseconds.
    """
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    events: list[dict[str, Any]] = []
    pid = 0
    for path in xplane_files:
        space = xplane_pb2.XSpace()
        space.ParseFromString(path.read_bytes())
        for plane in space.planes:
            events.append(
                {"name": "process_name", "ph": "M", "pid": pid, "args": {"name": plane.name}}
            )
            for line in plane.lines:
                events.append(
                    {
                        "name": "thread_name",
                        "ph": "M",
                        "pid": pid,
                        "tid": line.id,
                        "args": {"name": line.display_name or line.name},
                    }
                )
                start_ps = line.timestamp_ns * 1000
                for event in line.events:
                    metadata = plane.event_metadata.get(event.metadata_id)
                    name = metadata.display_name or metadata.name if metadata else ""
                    events.append(
                        {
                            "name": name,
                            "ph": "X",
                            "pid": pid,
                            "tid": line.id,
                            "ts": (start_ps + event.offset_ps) / 1e6,
                            "dur": event.duration_ps / 1e6,
                        }
                    )
            pid += 1
    return {"traceEvents": events}
