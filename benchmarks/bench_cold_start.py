"""Cold start and whole programs: keras_estimator vs tf.estimator 2.15, side by side.

What a program pays before its first step, and in all, on each side. Every
run is a fresh process of its own (never two at once), the reference first
in even rounds and last in odd ones (``_runner.alternating_rounds``); the
ratios (ours / 2.15, lower is better for keras_estimator) are taken within
each round and given as the median round with the lowest and highest.

* cold start (``--models``, default ``mlp``; also ``cnn``, ``wide_mlp``: the
  workloads of ``bench_repeated_calls.py``). In the fresh process, after
  ``import tensorflow`` (TF 2.21 here, 2.15 there: shown, not compared):
  - *package*: the first use of the API, ``import keras_estimator`` and its
    ``Estimator``, ``RunConfig`` and ``compat.layers`` against 2.15's first
    use of ``tf.estimator`` (which imports ``tensorflow_estimator``) and
    ``tf.compat.v1.layers``;
  - *cold start*: ``Estimator(...)`` to the end of ``train(steps=1)``;
  - *first step in all*: the two together.
  ``--phases`` adds, on our side, the CPU time of the cold start's parts
  (the model_fn's trace, pruning copies of the step, the first call of the
  step, checkpoint saves): a few Python wrappers, outside the headline runs.
* programs (``--programs NAME ...``, files of ``tests/programs/``): the whole
  program, as ``compat_programs.py`` runs it (here after
  ``keras_estimator.install()``, there unchanged), in wall time and in CPU
  time (the child's user + system time, all its threads), and the wall time
  the process spent in exit handlers after the program returned.

Both sides load byte-compiled modules: TensorFlow's, Keras' and 2.15's were
compiled when pip installed them, so this script byte-compiles the
keras_estimator package first (into its ``__pycache__`` folders, as
installing its wheel would), even when ``PYTHONDONTWRITEBYTECODE`` is set;
``--source`` leaves them as they are (then, with that variable set, every
run of ours compiles the package's sources again, which no installed copy
does). The machine's load average (``uptime``) is printed before and after::

    python benchmarks/bench_cold_start.py [--rounds 3] [--models mlp,cnn]
        [--programs tf1_style_script.py ...] [--phases] [--source]

``--side ours|ref --model NAME`` runs one cold start in this process and
prints its JSON line.
"""

from __future__ import annotations

import argparse
import collections
import compileall
import functools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

_HERE = Path(__file__).resolve().parent
REPO = _HERE.parent
PROGRAMS = REPO / "tests" / "programs"
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))
# This checkout's package, not whichever one the interpreter has installed.
if str(REPO) not in sys.path:
    sys.path.insert(1, str(REPO))

from _runner import (  # noqa: E402
    alternating_rounds,
    checkout_first,
    make_log,
    median_range,
    ratio_line,
    run_json,
)

_log = make_log("bench_cold_start")
SPANS = ("package", "cold_start", "first_step_total")
MODELS = ("mlp", "cnn", "wide_mlp")
EXIT_MARKER = "BENCH_EXIT_WAIT "

# Runs argv[1] as __main__ (after keras_estimator.install() when OURS is 1)
# and reports on stderr how long the exit handlers took after it returned:
# registered first, this handler runs last.
_PROGRAM_LAUNCHER = """
import atexit, os, runpy, sys, time
_marks = {}
def _report():
    ended = _marks.get("end")
    if ended is not None:
        wait = time.perf_counter() - ended
        sys.stderr.write("%s%.3f\\n" % (os.environ["BENCH_EXIT_MARKER"], wait))
        sys.stderr.flush()
atexit.register(_report)
if os.environ.get("BENCH_OURS") == "1":
    import keras_estimator
    keras_estimator.install()
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
finally:
    _marks["end"] = time.perf_counter()
"""


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, as uptime prints them."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f}"


# ------------------------------------------------------------------ one side


def _phase_timers() -> dict[str, float]:
    """Wraps the cold start's parts on our side; returns the CPU ms table they fill."""
    from keras_estimator._src.checkpoint import checkpoints
    from keras_estimator._src.engine import model_fn_trace, step_functions
    from keras_estimator._src.tf_internals import pruning

    spent: dict[str, float] = collections.defaultdict(float)

    def wrap(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                spent[label] += (time.process_time() - started) * 1e3

        setattr(owner, name, timed)

    wrap(model_fn_trace.ModelFnTrace, "call", "model_fn trace (variables, v1 Adam, gradients)")
    wrap(pruning, "prune", "pruned copies of the step")
    wrap(step_functions._SharedStep, "_call_pruned", "first call of the step (grappler, kernels)")
    wrap(checkpoints, "save", "checkpoint saves (steps 0 and 1)")
    return spent


def run_side(side: str, model: str, phases: bool) -> dict[str, Any]:
    """Times the package's first use and a cold start in this fresh process."""
    started, started_cpu = time.perf_counter(), time.process_time()
    import tensorflow as tf

    result: dict[str, Any] = {
        "side": side,
        "model": model,
        "tensorflow_version": tf.__version__,
        "tensorflow_import_ms": (time.perf_counter() - started) * 1e3,
        "tensorflow_import_cpu_ms": (time.process_time() - started_cpu) * 1e3,
    }
    started, started_cpu = time.perf_counter(), time.process_time()
    if side == "ref":
        tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
        api = tf.estimator
        api.Estimator, api.RunConfig  # noqa: B018  (imports tensorflow_estimator)
        compat_layers = tf.compat.v1.layers
    else:
        import keras_estimator

        api = keras_estimator
        api.Estimator, api.RunConfig  # noqa: B018
        compat_layers = keras_estimator.compat.layers
    result["package_ms"] = (time.perf_counter() - started) * 1e3
    result["package_cpu_ms"] = (time.process_time() - started_cpu) * 1e3

    from bench_repeated_calls import _workload

    model_fn, train_input_fn, *_ = _workload(model, tf, api, compat_layers)
    spent = _phase_timers() if phases and side == "ours" else None
    with tempfile.TemporaryDirectory(prefix=f"bench_cold_{side}_") as model_dir:
        started, started_cpu = time.perf_counter(), time.process_time()
        est = api.Estimator(model_fn, config=api.RunConfig(model_dir=model_dir))
        est.train(train_input_fn, steps=1)
        result["cold_start_ms"] = (time.perf_counter() - started) * 1e3
        result["cold_start_cpu_ms"] = (time.process_time() - started_cpu) * 1e3
        if int(est.get_variable_value("global_step")) != 1:
            raise RuntimeError("the cold start did not train one step")
    for clock in ("_ms", "_cpu_ms"):
        result["first_step_total" + clock] = result["package" + clock] + result["cold_start" + clock]
    if spent is not None:
        result["phases_cpu_ms"] = dict(spent)
    return result


def run_program(python: str, program: Path, ours: bool) -> dict[str, Any]:
    """Wall and CPU seconds of one run of `program`, and its exit handlers' wall time."""
    env = {
        **os.environ,
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "PYTHONHASHSEED": "0",
        "BENCH_OURS": "1" if ours else "0",
        "BENCH_EXIT_MARKER": EXIT_MARKER,
    }
    if ours:
        env = checkout_first(env)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(
        [python, "-c", _PROGRAM_LAUNCHER, str(program)],
        cwd=PROGRAMS,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if completed.returncode != 0 or "RESULT " not in completed.stdout:
        tail = completed.stderr[-2000:]
        raise RuntimeError(f"{program.name} failed ({'ours' if ours else '2.15'}):\n{tail}")
    waits = [
        float(line[len(EXIT_MARKER) :])
        for line in completed.stderr.splitlines()
        if line.startswith(EXIT_MARKER)
    ]
    return {"wall_s": wall, "cpu_s": cpu, "exit_wait_s": waits[-1] if waits else float("nan")}


# ------------------------------------------------------------------- report


def _range(values: list[float], digits: int = 0) -> str:
    median, low, high = median_range(values)
    return f"{median:.{digits}f} ({low:.{digits}f}-{high:.{digits}f})"


def _cold_starts(args: argparse.Namespace, pythons: dict[str, str]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for model in args.models:

        def run(side: str, model: str = model) -> dict[str, Any]:
            cmd = [pythons[side], Path(__file__).resolve(), "--side", side, "--model", model]
            return run_json(cmd, f"the {side} side ({model})", _log)

        rounds = alternating_rounds(args.rounds, ("ref", "ours"), run)
        print(
            f"\n{model}: ms, median (lowest-highest) over {args.rounds} rounds, one fresh "
            "process per side and round"
        )
        print(f"{'':<40} {'tf.estimator 2.15':>20} {'keras_estimator':>20}   ours / 2.15")
        ratios: dict[str, list[float]] = {}
        for clock, suffix in (("CPU", "_cpu_ms"), ("wall", "_ms")):
            key = "tensorflow_import" + suffix
            print(
                f"{'import tensorflow, ' + clock + ' (not compared)':<40} "
                f"{_range([r['ref'][key] for r in rounds]):>20} "
                f"{_range([r['ours'][key] for r in rounds]):>20}"
            )
            for span in SPANS:
                key = span + suffix
                ratios[key] = [r["ours"][key] / r["ref"][key] for r in rounds]
                label = span.replace("_", " ") + ", " + clock
                print(
                    f"{label:<40} {_range([r['ref'][key] for r in rounds]):>20} "
                    f"{_range([r['ours'][key] for r in rounds]):>20}  "
                    + ratio_line("", ratios[key], width=0, digits=2).strip()
                )
        summary[model] = {
            "ratios": {key: statistics.median(values) for key, values in ratios.items()},
            "ratios_per_round": ratios,
            "per_round": rounds,
        }
        if args.phases:
            phases = [run_json([sys.executable, Path(__file__).resolve(), "--side", "ours",
                                "--model", model, "--phases"], f"phases ({model})", _log)
                      for _ in range(args.rounds)]
            print(f"  our cold start's parts, CPU ms (median of {args.rounds} processes):")
            labels = sorted({label for p in phases for label in p["phases_cpu_ms"]})
            for label in labels:
                values = [p["phases_cpu_ms"].get(label, 0.0) for p in phases]
                print(f"    {label:<52} {_range(values):>16}")
            totals = [p["cold_start_cpu_ms"] for p in phases]
            print(f"    {'the whole cold start':<52} {_range(totals):>16}")
            summary[model]["phases"] = phases
    return summary


def _programs(args: argparse.Namespace, pythons: dict[str, str]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for name in args.programs:
        program = PROGRAMS / name
        if not program.is_file():
            raise SystemExit(f"no program {program}")

        def run(side: str, program: Path = program) -> dict[str, Any]:
            _log(f"{program.name}: the {side} side")
            return run_program(pythons[side], program, ours=side == "ours")

        rounds = alternating_rounds(args.rounds, ("ref", "ours"), run)
        print(f"\n{name}: seconds per run, median (lowest-highest) over {args.rounds} rounds")
        print(f"{'':<34} {'tf.estimator 2.15':>20} {'keras_estimator':>20}   ours / 2.15")
        ratios = {}
        for key, label in (("cpu_s", "CPU time"), ("wall_s", "wall time"),
                           ("exit_wait_s", "of which exit handlers, wall")):
            ref = [r["ref"][key] for r in rounds]
            ours = [r["ours"][key] for r in rounds]
            line = f"{label:<34} {_range(ref, 2):>20} {_range(ours, 2):>20}"
            if key != "exit_wait_s":
                ratios[key] = [o / f for o, f in zip(ours, ref, strict=True)]
                line += "  " + ratio_line("", ratios[key], width=0, digits=2).strip()
            print(line)
        summary[name] = {"ratios_per_round": ratios, "per_round": rounds}
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", default="mlp", help=f"comma-separated, among {MODELS}; '' for none")
    parser.add_argument("--programs", nargs="*", default=[], help="file names in tests/programs/")
    parser.add_argument("--phases", action="store_true")
    parser.add_argument("--source", action="store_true", help="do not byte-compile the package")
    parser.add_argument("--side", choices=("ours", "ref"))
    parser.add_argument("--model", default="mlp", choices=MODELS)
    args = parser.parse_args(argv)
    if args.side:
        result = run_side(args.side, args.model, args.phases)
        sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")
        return 0
    args.models = [name for name in args.models.split(",") if name]
    if args.rounds <= 0:
        parser.error("--rounds must be positive")
    if any(name not in MODELS for name in args.models):
        parser.error(f"--models takes names among {', '.join(MODELS)}")
    if not args.source:
        compileall.compile_dir(str(REPO / "keras_estimator"), quiet=1)

    from _ref_venv import ensure_reference_python

    pythons = {"ref": ensure_reference_python(), "ours": sys.executable}
    print(f"load average at start: {load_average()}; package "
          f"{'from source' if args.source else 'byte-compiled'}")
    summary = {
        "rounds": args.rounds,
        "cold_start": _cold_starts(args, pythons),
        "programs": _programs(args, pythons),
    }
    print(f"\nload average at end: {load_average()}")
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
