"""Summaries written from inside model_fn, and the hook that asks for them.

`tf.summary.*` (TF2) and `tf.compat.v1.summary.*` (TF1) calls in a model_fn
are recorded only in runs whose hooks ask for summaries, as TF1's
`SummarySaverHook` ran the merged summary op only on its steps. A hook asks
by fetching `summary_fetch(output_dir)`; the step that computes the fetch
traces model_fn under a default writer for that directory and
`record_if(True)`, then writes the TF1 summary protos collected in the graph.
Every other trace records nothing (`record_if(False)`), so the summary calls
cost nothing in fused runs.

Summaries are written at the global step *before* the step's update: the
step the loss was computed at, as tf.estimator's curves start at step 0.

Each directory has one writer, shared by every trace that writes there and
alive as long as one of them (or a hook using it) is: the trace graphs hold
it, so it goes with the Estimator whose functions they are. Its event file is
open only while a loop with a `SummarySaverHook` for that directory runs;
each run of a loop writes a new event file, as TensorBoard reads them all.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

from keras_estimator._src.base.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from keras_estimator._src.engine.fetches import SUMMARY_PREFIX
from keras_estimator._src.hooks.basic_hooks import SecondOrStepTimer
from keras_estimator._src.tf_internals import private_api

logger = logging.getLogger("keras_estimator")

# The collection through which a trace graph keeps the writers it captured.
_WRITERS_COLLECTION = "keras_estimator_summary_writers"


class _EventFile:
    """One directory's summary writer, whose file is open only while in use.

    Traced steps capture the writer's resource handle, not its file: closing
    deletes the resource, flushing and closing the file, and reopening makes
    a new one (in a new event file) under the same handle, so functions
    traced earlier write to it again without a retrace.
    """

    def __init__(self, output_dir: str) -> None:
        with tf.init_scope():
            self.writer = tf.summary.create_file_writer(output_dir)
        self._output_dir = output_dir
        self._users = 0
        self._is_open = True

    def acquire(self) -> None:
        """Opens the event file (again) for a loop that writes to it."""
        if not self._is_open:
            private_api.reopen_summary_writer(self.writer, self._output_dir)
            self._is_open = True
        self._users += 1

    def release(self) -> None:
        """Closes the event file once no loop that acquired it is running."""
        self._users = max(self._users - 1, 0)
        if self._users == 0 and self._is_open:
            private_api.close_summary_writer(self.writer)
            self._is_open = False


# Held weakly: by the trace graphs that captured each writer and by the
# hooks using it, so a directory's writer goes with the last of them.
_event_files: weakref.WeakValueDictionary[str, _EventFile] = weakref.WeakValueDictionary()


def summary_fetch(output_dir: str) -> str:
    """The fetch key that makes a step write its summaries to `output_dir`."""
    return SUMMARY_PREFIX + output_dir


def summary_dirs(keys: Any) -> list[str]:
    return [k[len(SUMMARY_PREFIX) :] for k in keys if k.startswith(SUMMARY_PREFIX)]


def _event_file(output_dir: str) -> _EventFile:
    event_file = _event_files.get(output_dir)
    if event_file is None:
        event_file = _EventFile(output_dir)
        _event_files[output_dir] = event_file
    return event_file


def writer_for(output_dir: str) -> Any:
    """The writer for `output_dir`, kept alive by the graph being traced."""
    event_file = _event_file(output_dir)
    graph = tf.compat.v1.get_default_graph()
    if graph.building_function:
        # Eagerly, writes happen at once: the caller's reference is enough,
        # and the process-wide default graph must not keep writers forever.
        graph.add_to_collection(_WRITERS_COLLECTION, event_file)
    return event_file.writer


@contextlib.contextmanager
def recording(output_dirs: list[str], step: tf.Tensor) -> Iterator[bool]:
    """Records the enclosed summaries to the first of `output_dirs`, if any."""
    if not output_dirs:
        with tf.summary.record_if(False):
            yield False
        return
    writer = writer_for(output_dirs[0])
    with writer.as_default(step=step), tf.summary.record_if(True):
        yield True


def write_collected(loss: Any) -> None:
    """Writes the loss and the TF1 summaries model_fn added to the graph."""
    if loss is not None:
        tf.summary.scalar("loss", tf.reshape(loss, []))
    graph = tf.compat.v1.get_default_graph()
    protos = graph.get_collection(tf.compat.v1.GraphKeys.SUMMARIES)
    if protos:
        tf.summary.experimental.write_raw_pb(tf.compat.v1.summary.merge(protos))


class SummarySaverHook(SessionRunHook):
    """Saves the model_fn's summaries every N steps or seconds.

    Args:
        save_steps: save every this many steps (or `save_secs`, not both).
        save_secs: save every this many seconds.
        output_dir: the directory for the event files.
        summary_writer: not supported (TF1 FileWriter); pass `output_dir`.
        scaffold: not supported; must be None.
        summary_op: not supported; summaries come from the model_fn.
    """

    def __init__(
        self,
        save_steps: int | None = None,
        save_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
        scaffold: Any = None,
        summary_op: Any = None,
    ) -> None:
        for name, value in (
            ("summary_writer", summary_writer),
            ("scaffold", scaffold),
            ("summary_op", summary_op),
        ):
            if value is not None:
                raise ValueError(
                    f"SummarySaverHook({name}={value!r}) is not supported: TF1 "
                    "writers and summary ops do not exist in TF2. Pass output_dir; "
                    "summaries written in model_fn are saved there."
                )
        if output_dir is None:
            raise ValueError(
                "SummarySaverHook needs output_dir (got None): the directory to "
                "write event files to, usually the Estimator's model_dir."
            )
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._output_dir = str(output_dir)
        self._due = False
        self._event_file: _EventFile | None = None

    def begin(self) -> None:
        if self._event_file is None:
            self._event_file = _event_file(self._output_dir)
            self._event_file.acquire()

    def steps_until_needed(self, global_step: int) -> int | None:
        # The run that starts at the due step must be a run of its own.
        return self._timer.steps_until_trigger(global_step)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        self._due = self._timer.should_trigger_for_step(run_context.global_step)
        if not self._due:
            return None
        return SessionRunArgs(summary_fetch(self._output_dir))

    def after_run(
        self, run_context: SessionRunContext, run_values: SessionRunValues
    ) -> None:
        if self._due:
            self._timer.update_last_triggered_step(run_context.global_step - 1)
            self._due = False

    def end(self, session: Any) -> None:
        # The file is complete for TensorBoard, and no descriptor outlives
        # the loop (an Estimator may live long after training).
        if self._event_file is not None:
            self._event_file.release()
            self._event_file = None
