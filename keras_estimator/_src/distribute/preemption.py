"""SIGTERM during `Estimator.train`: stop at the next run boundary and save.

Schedulers (Kubernetes, Slurm, preemptible VMs) send SIGTERM and wait a
grace period before killing. tf.estimator let SIGTERM kill training and lost
the steps since the last checkpoint. Under `on_sigterm` the handler only
sets a flag; `StopOnSigterm`, the loop's last callback before the workers'
stop agreement, then plans no further steps (`steps_until_needed` is 0) and
stops the loop at the boundary of the run under way, so training ends
within one run. Hooks' `end` runs as on any stop (the CheckpointSaverHook
saves there); `Estimator.train` saves the final step itself when no hook
did and logs a warning.

Covered:
* Only in the main thread, where `signal.signal` works; `train()` in other
  threads keeps whatever handler the process has.
* With SIGTERM's default handling (no handler installed), the process
  then ends as SIGTERM ends it, once the checkpoint is written and
  model_dir's lock released: the signal is sent again under the default
  handling. `train()` does not return, so what the program does after it
  (an evaluation, `train_and_evaluate`'s final export of a model that did
  not finish training, an exit status of 0) does not happen, as with 2.15,
  which SIGTERM killed at once.
* A SIGTERM handler the program installed in Python is restored when
  `train()` ends and then called with the signal, after the checkpoint is
  written; if it returns, so does `train()`. A handler installed outside
  Python (`signal.getsignal` returns None) and an ignored SIGTERM
  (`SIG_IGN`) are left alone: then no handler is installed.
* The chief, or a process without a cluster, saves. Under
  MultiWorkerMirroredStrategy a signalled worker stops every worker at the
  same boundary (the stop agreement) and the chief saves; non-chief workers
  only stop. On the workers that got no SIGTERM, `train()` then raises a
  RuntimeError saying so, once the checkpoint is written: returning would
  let the program take a model stopped part way for a trained one (its
  export, a chief's exit status of 0 that ends the job as done).
  Parameter-server and ps tasks keep the default handler (they serve the chief and never return from `train()`); on the chief the
  scheduling loop stops like the local one, also while a run waits for lost
  workers (the run is given up; see `engine/ps_training.py`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

import keras

logger = logging.getLogger("keras_estimator")

_Handler = Callable[[int, types.FrameType | None], Any]


class Preemption:
    """Whether SIGTERM arrived while `on_sigterm` was active."""

    def __init__(self) -> None:
        self.requested = False
        self.installed = False
        # Under MultiWorkerMirroredStrategy: another worker's SIGTERM stopped
        # this worker's training (the stop agreement says so).
        self.by_peer = False
        self.stopped_at: int | None = None  # the step training stopped at, saved
        self._frame: types.FrameType | None = None

    @property
    def stops(self) -> bool:
        """Whether SIGTERM, this process's or another worker's, stops training."""
        return self.requested or self.by_peer

    def handle(self, signum: int, frame: types.FrameType | None) -> None:
        # A signal handler: set the flag only; the loop reads it at its next
        # run boundary.
        if not self.requested:
            logger.warning(
                "SIGTERM received: training stops after the run of steps under "
                "way and saves a checkpoint."
            )
        self.requested = True
        self._frame = frame


class StopOnSigterm(keras.callbacks.Callback):
    """Ends the loop at the next run boundary once SIGTERM arrived.

    It acts only once the loop has begun: a loop that plans no step before
    it begins returns at once, and under MultiWorkerMirroredStrategy the
    other workers would then wait for it in the loop's first collective.
    Begun, the empty plan is agreed by every worker, and hooks' `begin` and
    `end` run as on any stop.
    """

    def __init__(self, preemption: Preemption) -> None:
        super().__init__()
        self._preemption = preemption
        self._begun = False

    @property
    def preemption(self) -> Preemption:
        return self._preemption

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        self._begun = True

    def requested(self) -> bool:
        """Whether SIGTERM has arrived (for loops that wait between boundaries)."""
        return self._preemption.requested

    def steps_until_needed(self, global_step: int) -> int | None:
        return 0 if self._begun and self._preemption.requested else None

    # Under a fixed loop length too, the next run is planned empty.
    steps_until_stop = steps_until_needed

    def on_train_batch_end(
        self, batch: int, logs: dict[str, Any] | None = None
    ) -> None:
        if self._preemption.requested:
            self.model.stop_training = True


@contextlib.contextmanager
def on_sigterm() -> Iterator[Preemption]:
    """Turns SIGTERM into a `Preemption` flag for the duration of the block.

    On leaving, the previous handler is restored. If SIGTERM arrived, that
    handler is then called with the signal when it is a Python callable;
    when it is the default handling, the signal is sent again, which ends
    the process.
    """
    preemption = Preemption()
    previous = _installable_previous()
    if previous is not None:
        signal.signal(signal.SIGTERM, preemption.handle)
        preemption.installed = True
    _active.stack.append(preemption)
    try:
        yield preemption
    finally:
        _active.stack.remove(preemption)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
            if preemption.requested:
                _pass_on(previous, preemption)


def _pass_on(previous: _Handler | int, preemption: Preemption) -> None:
    """Gives the SIGTERM that stopped training to the handler `on_sigterm` replaced."""
    if callable(previous):
        previous(signal.SIGTERM, preemption._frame)
    elif previous == signal.SIG_DFL:
        raised = sys.exc_info()[1]
        if raised is not None:
            # The process ends before the error could be shown.
            logger.error("Training stopped on SIGTERM with an error:", exc_info=raised)
        logger.warning(
            "Ending the process as SIGTERM's default handling does; "
            "install a SIGTERM handler (signal.signal) to go on "
            "after train() instead."
        )
        _flush_standard_streams()
        os.kill(os.getpid(), signal.SIGTERM)


class _Active(threading.local):
    """Each thread's `on_sigterm` blocks under way, innermost last."""

    def __init__(self) -> None:
        self.stack: list[Preemption] = []


_active = _Active()


def stopping() -> bool:
    """Whether the training under way in this thread stops on SIGTERM (its own or a peer's).

    What runs as training ends (hooks' `end`, saving listeners) reads it:
    `train_and_evaluate` neither evaluates nor exports a model that SIGTERM
    stopped part way.
    """
    stack = _active.stack
    return bool(stack) and stack[-1].stops


def _flush_standard_streams() -> None:
    """Writes out what the program printed before the process ends."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass


def _installable_previous() -> _Handler | int | None:
    """The handler to restore, or None when no handler may be installed."""
    if threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.getsignal(signal.SIGTERM)
    if previous is None or previous == signal.SIG_IGN:
        return None
    return previous
