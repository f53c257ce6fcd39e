"""`ProgressBar`: Keras' progress bar for `Estimator.train`.

The display is `keras.utils.Progbar`, driven by a Keras callback that reads
the global step and the loss from the loop's run state (`engine/run_plan.py`'s
`RunState`, which the loop updates from each compiled call's results
before callbacks run), never from the logs. It says through
`steps_until_needed` that it needs no particular step, so it never shortens
a fused run or makes a step fetch anything: with fusion on, it is updated
once per fused call; with `RunConfig(steps_per_loop=N)`, once per loop.
Training, checkpoints and logs are the same with and without it.

The bar counts the steps of this `train` call (out of `steps`, or up to
`max_steps`, when one bounds the run), as `fit` counts an epoch's steps.
In a terminal or a notebook it is Keras' `verbose=1` display, redrawn in
place with the ETA; elsewhere (a file or a pipe, when forced on) Keras'
`verbose=2` display: one line when training ends.
"""

from __future__ import annotations

import sys
from typing import Any, Protocol

import keras


def interactive(stream: Any = None) -> bool:
    """Whether output goes to a terminal or to a notebook (an IPython kernel)."""
    stream = sys.stdout if stream is None else stream
    try:
        if stream is not None and stream.isatty():
            return True
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        pass
    return in_notebook()


def in_notebook() -> bool:
    """Whether this process is an IPython kernel (Jupyter, Colab)."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    if get_ipython is None:
        return False
    try:
        shell = get_ipython()
    except Exception:  # noqa: BLE001 - an odd IPython: no notebook
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def check_progress(progress: Any) -> bool:
    """`train(progress=...)` as a decision: None means on when interactive.

    Raises:
        TypeError: `progress` is not a bool or None.
    """
    if progress is None:
        return interactive()
    if not isinstance(progress, bool):
        raise TypeError(
            f"progress must be True, False or None (on in a terminal or a "
            f"notebook), got {progress!r} of type {type(progress).__name__}."
        )
    return progress


class StepSource(Protocol):
    """Where the bar reads the run's progress (the loop's `RunState`)."""

    value: int
    last_loss: float | None


class ProgressBar(keras.callbacks.Callback):
    """Shows a `keras.utils.Progbar` of this train call's steps and loss.

    Args:
        state: the loop's step state: `value` (the global step now) and
            `last_loss` (the loss of the last step run).
        last_step: the global step the run stops at, if `steps` or
            `max_steps` bounds it (gives the bar its target and the ETA).
        dynamic: Keras' in-place display (`verbose=1`); by default, when
            stdout is a terminal or this is a notebook. Otherwise one line
            at the end (`verbose=2`).
    """

    def __init__(
        self,
        state: StepSource,
        last_step: int | None = None,
        dynamic: bool | None = None,
    ) -> None:
        super().__init__()
        self._state = state
        self._last_step = None if last_step is None else int(last_step)
        self._dynamic = interactive() if dynamic is None else dynamic
        self._bar: keras.utils.Progbar | None = None
        self._start = 0
        self._shown = False

    # ---- what the loop asks of callbacks ----------------------------------------
    def steps_until_needed(self, global_step: int) -> int | None:
        """Any run length: the display never bounds fusion."""
        return None

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        # The step a callback's restore moved the run to counts as its start.
        self._start = int(self._state.value)
        target = None
        if self._last_step is not None and self._last_step > self._start:
            target = self._last_step - self._start
        self._bar = keras.utils.Progbar(
            target,
            verbose=1 if self._dynamic else 2,
            stateful_metrics=["loss"],
            unit_name="step",
        )
        self._shown = False

    def on_train_batch_end(
        self, batch: int, logs: dict[str, Any] | None = None
    ) -> None:
        self._update(finalize=False)

    def on_train_end(self, logs: dict[str, Any] | None = None) -> None:
        if self._shown:
            self._update(finalize=True)

    def _update(self, finalize: bool) -> None:
        if self._bar is None:
            return
        done = max(int(self._state.value) - self._start, 0)
        if not finalize and done == 0:
            return
        if finalize and self._bar.target is None:
            # As Keras' ProgbarLogger ends an epoch of unknown length: the
            # steps run become the target (verbose=2 shows nothing without).
            self._bar.target = done
        loss = self._state.last_loss
        values = [] if loss is None else [("loss", float(loss))]
        self._bar.update(done, values, finalize=finalize)
        self._shown = True
