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
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

from keras_estimator._basic_hooks import SecondOrStepTimer
from keras_estimator._fetches import SUMMARY_PREFIX
from keras_estimator._session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)

logger = logging.getLogger("keras_estimator")

_writers: dict[str, Any] = {}


def summary_fetch(output_dir: str) -> str:
    """The fetch key that makes a step write its summaries to `output_dir`."""
    return SUMMARY_PREFIX + output_dir


def summary_dirs(keys: Any) -> list[str]:
    return [k[len(SUMMARY_PREFIX) :] for k in keys if k.startswith(SUMMARY_PREFIX)]


def writer_for(output_dir: str) -> Any:
    """One file writer per directory for the whole process."""
    writer = _writers.get(output_dir)
    if writer is None:
        with tf.init_scope():
            writer = tf.summary.create_file_writer(output_dir)
        _writers[output_dir] = writer
    return writer


def flush_all() -> None:
    for writer in _writers.values():
        writer.flush()


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
        flush_all()
