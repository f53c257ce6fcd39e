"""What the benchmark scripts share to run and summarise a comparison.

Standard library only: the reference-side scripts import it too, under the
TF 2.15 interpreter of ``_ref_venv.py``.

* :func:`make_log`: progress lines on stderr, prefixed with the script's name;
* :func:`run_json`: runs one side of a comparison in a subprocess of its own
  (TensorFlow's C++ log lines quieted, stderr passed through) and returns the
  JSON object it printed as its last stdout line;
* :func:`run_worker`: runs a script's ``--worker`` side under the reference
  interpreter, or here after ``keras_estimator.install()`` (the same
  tf.estimator program unchanged), and returns its ``RESULT`` line;
* :func:`alternating_rounds`: runs the sides round after round, the first side
  first in even rounds and last in odd ones, so that a machine getting faster
  or slower during the run weighs on both;
* :func:`time_calls`: wall milliseconds of repeated calls;
* :func:`median_range` and :func:`ratio_line`: a ratio taken within each
  round, given as its median round with the lowest and highest.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any


def make_log(name: str) -> Callable[[str], None]:
    """A function printing progress lines ``[name] ...`` on stderr."""

    def log(message: str) -> None:
        print(f"[{name}] {message}", file=sys.stderr, flush=True)

    return log


def run_json(
    cmd: Sequence[Any],
    label: str,
    log: Callable[[str], None] | None = None,
    *,
    marker: str = "",
    quiet: bool = False,
    env: dict[str, str] | None = None,
    cwd: Any = None,
    timeout: float | None = None,
) -> dict[str, Any]:
    """Runs `cmd` and returns the JSON object of its last stdout line starting with `marker`.

    Args:
        cmd: the command; its parts are made strings.
        label: names the run in progress lines and errors.
        log: prints progress; None for none.
        marker: the prefix of the result line (removed before parsing).
        quiet: capture stderr (its tail goes in the error) instead of passing
            it through.
        env: variables added to this process's environment, after
            ``TF_CPP_MIN_LOG_LEVEL=2``.
        cwd, timeout: as for `subprocess.run`.

    Raises:
        RuntimeError: the command failed or printed no result line.
    """
    cmd = [str(part) for part in cmd]
    if log is not None:
        log(f"running {label}: " + " ".join(cmd))
    full_env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **(env or {})}
    proc = subprocess.run(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if quiet else sys.stderr,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip() and line.startswith(marker)]
    if proc.returncode != 0 or not lines:
        problem = f"exit status {proc.returncode}" if proc.returncode else "no result line"
        tail = f"\n{proc.stderr[-3000:]}" if quiet and proc.stderr else ""
        raise RuntimeError(f"{label} failed ({problem}): {' '.join(cmd)}{tail}")
    return json.loads(lines[-1][len(marker) :])


# Runs a tf.estimator program (argv[1:]) after keras_estimator.install().
ZERO_CHANGE_LAUNCHER = (
    "import keras_estimator, runpy, sys; keras_estimator.install(); "
    "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def checkout_first(env: dict[str, str]) -> dict[str, str]:
    """`env` with this checkout first on PYTHONPATH, so a run of ours started
    outside the repository's root imports its package, not an installed one."""
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [REPO, env.get("PYTHONPATH")]))}


def run_worker(python: Any, script: Sequence[Any], ours: bool) -> dict[str, Any]:
    """`script`'s ``RESULT`` JSON, run by `python`, after ``install()`` if `ours`.

    From the repository's root, with a fixed ``PYTHONHASHSEED``, stderr kept
    for the error of a failed run, at most 30 minutes.
    """
    cmd = [python, "-c", ZERO_CHANGE_LAUNCHER, *script] if ours else [python, *script]
    return run_json(
        cmd,
        "keras_estimator" if ours else "tf.estimator",
        marker="RESULT ",
        quiet=True,
        env={"PYTHONHASHSEED": "0"},
        cwd=REPO,
        timeout=1800,
    )


def alternating_rounds(
    rounds: int, sides: Sequence[str], run_side: Callable[[str], dict[str, Any]]
) -> list[dict[str, dict[str, Any]]]:
    """`run_side(side)` for every side, `rounds` times; one dict per round.

    The sides run one after the other, never at once, in `sides`' order in
    even rounds and reversed in odd ones.
    """
    results = []
    for index in range(rounds):
        order = list(sides) if index % 2 == 0 else list(reversed(sides))
        results.append({side: run_side(side) for side in order})
    return results


def worker_rounds(rounds: int, script: Sequence[Any]) -> list[dict[str, dict[str, Any]]]:
    """`run_worker` of `script` by tf.estimator 2.15 ("reference") and by us ("ours").

    `alternating_rounds` of the two sides; the reference interpreter is the
    one `_ref_venv.py` finds or builds.
    """
    from _ref_venv import ensure_reference_python

    pythons = {"reference": ensure_reference_python(), "ours": sys.executable}
    return alternating_rounds(
        rounds,
        ("reference", "ours"),
        lambda side: run_worker(pythons[side], script, side == "ours"),
    )


def time_calls(
    call: Callable[[], Any], count: int, clock: Callable[[], float] = time.perf_counter
) -> list[float]:
    """Milliseconds of each of `count` calls of `call`: wall time, or `clock`'s.

    ``clock=time.process_time`` counts the CPU time of all the process's
    threads, which other jobs on a shared machine move far less than wall time.
    """
    times = []
    for _ in range(count):
        started = clock()
        call()
        times.append((clock() - started) * 1e3)
    return times


def median_range(values: Sequence[float]) -> tuple[float, float, float]:
    """The median, lowest and highest of `values`."""
    return statistics.median(values), min(values), max(values)


def ratio_line(label: str, ratios: Sequence[float], width: int = 34, digits: int = 1) -> str:
    """``label  median x  (lowest - highest)`` for ratios taken within rounds."""
    median, low, high = median_range(ratios)
    return f"{label:<{width}} {median:7.{digits}f}x  ({low:.{digits}f} - {high:.{digits}f})"
