"""`ProgressBar`: a Keras-style progress display for `Estimator.train`.

The display is a Keras callback that only reads what the loop already
hands every callback after each compiled call: the logs' `global_step` and
`loss` (see `engine/loop.py`), already on the host, as the loop reads them
itself. It says through `steps_until_needed` that it
needs no particular step, so it never shortens a fused run or makes a step
fetch anything: with fusion on, it is updated once per fused call; with
`RunConfig(steps_per_loop=N)`, once per loop. Training, checkpoints and
logs are the same with and without it.

Each update shows the global step (out of the last step when `steps` or
`max_steps` bounds the run, with a bar and an ETA), the loss of the call's
last step and the steps per second. In a terminal or a notebook the line
is redrawn in place (at most every `interval` seconds); elsewhere (output
to a file or a pipe, when forced on) a line is printed at most every
`interval` seconds, plus the final one.
"""

from __future__ import annotations

import collections
import math
import sys
import time
from typing import Any, TextIO

import keras

# Seconds between two redraws in a terminal or notebook, and between two
# printed lines elsewhere.
DYNAMIC_INTERVAL = 0.1
STATIC_INTERVAL = 10.0
# The steps/s shown while training (and the ETA) are measured over about the
# last RATE_WINDOW seconds, so that slow early runs (tracing) soon drop out.
RATE_WINDOW = 5.0
_BAR_WIDTH = 20


def _clock() -> float:
    """Seconds on a monotonic clock (a function so tests can replace it)."""
    return time.monotonic()


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


class ProgressBar(keras.callbacks.Callback):
    """Shows the global step, loss, steps/s and ETA of a training run.

    Args:
        start: the global step the run starts from.
        last_step: the global step the run stops at, if `steps` or
            `max_steps` bounds it (enables the bar and the ETA).
        stream: where to write; `sys.stdout` (looked up at each write) by
            default.
        dynamic: redraw one line in place; by default, when `stream` is a
            terminal or this is a notebook.
    """

    def __init__(
        self,
        start: int,
        last_step: int | None = None,
        stream: TextIO | None = None,
        dynamic: bool | None = None,
    ) -> None:
        super().__init__()
        self._start = int(start)
        self._last_step = None if last_step is None else int(last_step)
        self._stream = stream
        self._dynamic = interactive(stream) if dynamic is None else dynamic
        self._interval = DYNAMIC_INTERVAL if self._dynamic else STATIC_INTERVAL
        self._began = 0.0
        self._first: tuple[int, float] | None = None
        self._recent: collections.deque[tuple[int, float]] = collections.deque()
        self._step: int | None = None
        self._loss: float | None = None
        self._last_shown = -math.inf
        self._width = 0

    # ---- what the loop asks of callbacks ----------------------------------------
    def steps_until_needed(self, global_step: int) -> int | None:
        """Any run length: the display never bounds fusion."""
        return None

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        self._began = _clock()
        self._first = None
        self._recent.clear()
        self._step = None
        self._loss = None
        self._last_shown = -math.inf
        self._width = 0

    def on_train_batch_end(
        self, batch: int, logs: dict[str, Any] | None = None
    ) -> None:
        if not logs or "global_step" not in logs:
            return
        now = _clock()
        self._step = int(logs["global_step"])
        if "loss" in logs:
            self._loss = float(logs["loss"])
        if self._first is None:
            self._first = (self._step, now)
        self._recent.append((self._step, now))
        # Keep one update older than the window: the rate spans all of it.
        while len(self._recent) > 2 and self._recent[1][1] <= now - RATE_WINDOW:
            self._recent.popleft()
        if now - self._last_shown >= self._interval:
            self._show(self._line(now, final=False), final=False)
            self._last_shown = now

    def on_train_end(self, logs: dict[str, Any] | None = None) -> None:
        if self._step is None:
            return
        self._show(self._line(_clock(), final=True), final=True)

    # ---- the line ------------------------------------------------------------------
    def steps_per_sec(self, now: float, final: bool = False) -> float | None:
        """Steps per second after the first run, whose time includes tracing.

        While training: over about the last `RATE_WINDOW` seconds, none
        until a second run ends. At the end: over the whole run after the
        first run (from the start, for a run made in one call).
        """
        if self._step is None or self._first is None:
            return None
        if not final:
            old_step, old_time = self._recent[0]
            if self._step > old_step and now > old_time:
                return (self._step - old_step) / (now - old_time)
            return None
        first_step, first_time = self._first
        if self._step > first_step and now > first_time:
            return (self._step - first_step) / (now - first_time)
        if final and self._step > self._start and now > self._began:
            return (self._step - self._start) / (now - self._began)
        return None

    def _line(self, now: float, final: bool) -> str:
        assert self._step is not None
        parts = []
        if self._last_step is not None and self._last_step > self._start:
            total = self._last_step - self._start
            done = min(max(self._step - self._start, 0), total)
            filled = int(_BAR_WIDTH * done / total)
            bar = "━" * filled + "─" * (_BAR_WIDTH - filled)
            width = len(str(self._last_step))
            parts.append(f"step {self._step:>{width}}/{self._last_step} {bar}")
        else:
            parts.append(f"step {self._step}")
        if self._loss is not None:
            parts.append(f"loss: {_number(self._loss)}")
        rate = self.steps_per_sec(now, final)
        if rate is not None:
            parts.append(f"{rate:,.1f} steps/s")
        if final:
            parts.append(f"{_duration(now - self._began)} total")
        elif self._last_step is not None and rate:
            remaining = max(self._last_step - self._step, 0)
            parts.append(f"ETA: {_duration(remaining / rate)}")
        return " - ".join(parts)

    def _show(self, line: str, final: bool) -> None:
        stream = self._stream if self._stream is not None else sys.stdout
        if stream is None:
            return
        if self._dynamic:
            padding = " " * max(self._width - len(line), 0)
            self._width = len(line)
            text = f"\r{line}{padding}" + ("\n" if final else "")
        else:
            text = line + "\n"
        stream.write(text)
        stream.flush()


def _number(value: float) -> str:
    if value == 0 or 1e-3 <= abs(value) < 1e5 or not math.isfinite(value):
        return f"{value:.4f}"
    return f"{value:.4e}"


def _duration(seconds: float) -> str:
    """`7s`, `2:05`, `1:02:05`, as Keras' progress bar writes durations."""
    if not math.isfinite(seconds):
        return "?"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}:{secs:02d}"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"
