"""tests/programs/ side by side: tf.estimator 2.15 against keras_estimator.

Runs every program in tests/programs/, one at a time: --reference-runs times
(default 3) with plain TensorFlow 2.15.1 + tensorflow-estimator 2.15.0 in the
reference venv (`_ref_venv.py`; set KERAS_ESTIMATOR_REF_VENV to reuse one),
and once here after `keras_estimator.install()`, with the package
byte-compiled first as installing it would. Prints a table, one row per
RESULT key: 2.15's range over its runs, ours, and whether ours is inside.

Match rule, per key. Floats (and lists of floats, element by element): ours
must lie in [min, max] of 2.15's runs widened by ABS_TOLERANCE +
REL_TOLERANCE * max(|min|, |max|); the two implementations draw different
initial weights and shuffles, and unseeded programs differ from run to run in
2.15 itself, so 2.15's own spread is the yardstick. Integers (global steps,
counts): ours must lie in 2.15's [min, max] exactly. Anything else (keys,
names, flags, lists of ints or strings): ours must equal one of 2.15's
values. Keys in DEVIATIONS are documented behaviour differences, shown apart
and not compared.

    python benchmarks/compat_programs.py [--only NAME ...] [--reference-runs K]
        [--skip-reference]

A subset: --only takes program names (the .py is optional) or shell
patterns, e.g. `--only 'cookbook_*' hooks`.
"""

from __future__ import annotations

import argparse
import compileall
import fnmatch
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
PROGRAMS = REPO / "tests" / "programs"
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _ref_venv  # noqa: E402
from _runner import ZERO_CHANGE_LAUNCHER, checkout_first  # noqa: E402

TIMEOUT_S = 300
ABS_TOLERANCE = 0.05
REL_TOLERANCE = 0.05
# Documented behaviour differences (fnmatch patterns of RESULT keys): shown,
# never compared. Not noise: noise is measured by 2.15's own runs.
DEVIATIONS = {
    # 2.15 ran only the Keras 2 optimizer's iteration increment that
    # apply_gradients returned, never its updates (accuracy of an untrained
    # model); here the updates run.
    "keras_layers_keras_optimizer.py": {"accuracy"},
    # The same: tf.group(Adam.apply_gradients(...)) left 2.15's bias at zero
    # (bias_sum 0.0 in every run) and its kernel at the initial draw.
    "object_based_checkpoint.py": {"kernel_sum", "bias_sum"},
    # Under install(), disable_v2_behavior() keeps eager execution on by design.
    "tf1_style_script.py": {"executing_eagerly"},
    # tf.estimator 2.15 has no BoostedTreesEstimator; keras_estimator serves
    # 2.8's (docs: known differences, estimator:BoostedTreesEstimator).
    "migrate_canned_estimators.py": {"boosted_trees_*"},
    # The same: the boosted-trees tutorials' trees (their reference is 2.8,
    # benchmarks/_ref_venv_28.py); the linear half of boosted_trees.ipynb
    # still compares with 2.15.
    "boosted_trees_tutorial.py": {"boosted_trees_*"},
    "boosted_trees_model_understanding.py": {"*"},
    # No graph.pbtxt (or .meta files): TF2 has no graph to write
    # (CheckpointSaverHook's save_graph_def is accepted and ignored).
    "migrate_checkpoint_saver.py": {"model_dir_listing"},
    "bert_classifier.py": {"output_files"},
    # numpy_input_fn has no queue, so no summary of how full it was.
    "migrate_tensorboard.py": {"input_queue_tags"},
    # TensorFlow 2's SavedModel writer adds fingerprint.pb and an empty assets/.
    "migrate_saved_model.py": {"estimator_model_files"},
    "census_estimator.py": {"export_files"},
}


def run(python: str, program: Path, ours: bool) -> tuple[dict | None, str, float]:
    """Runs one program; returns (RESULT dict or None, error line, seconds)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONHASHSEED="0")
    if ours:
        env = checkout_first(env)
    command = [python, "-c", ZERO_CHANGE_LAUNCHER, str(program)] if ours else [python, str(program)]
    start = time.perf_counter()
    try:
        completed = subprocess.run(
            command,
            cwd=PROGRAMS,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, f"timed out after {TIMEOUT_S} s", time.perf_counter() - start
    seconds = time.perf_counter() - start
    for line in completed.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :]), "", seconds
    errors = [
        line
        for line in completed.stderr.splitlines()
        if line
        and not line.startswith((" ", "WARNING", "W0000", "I0000", "Instructions"))
    ]
    return None, (errors[-1] if errors else f"exit {completed.returncode}"), seconds


class Row(NamedTuple):
    name: str
    refs: list[dict]
    ref_errors: list[str]
    ref_seconds: list[float]
    ours: dict | None
    our_error: str
    our_s: float
    match: str
    differing: list[str]
    deviations: list[str]


def is_deviation(name: str, key: str) -> bool:
    return any(fnmatch.fnmatchcase(key, p) for p in DEVIATIONS.get(name, ()))


def _widen(lo: float, hi: float) -> tuple[float, float]:
    slack = ABS_TOLERANCE + REL_TOLERANCE * max(abs(lo), abs(hi))
    return lo - slack, hi + slack


def compare_key(refs: list, ours) -> bool:
    """Whether `ours` lies within 2.15's values `refs` (one per run)."""
    if _floats(ours) and all(_floats(r) or _ints(r) for r in refs):
        ours_list = ours if isinstance(ours, list) else [ours]
        ref_lists = [r if isinstance(r, list) else [r] for r in refs]
        if any(len(r) != len(ours_list) for r in ref_lists):
            return False
        for i, value in enumerate(ours_list):
            lo, hi = _widen(min(r[i] for r in ref_lists), max(r[i] for r in ref_lists))
            if not lo <= value <= hi:
                return False
        return True
    if all(_floats(r) for r in refs) and _ints(ours):
        return compare_key(
            refs, [float(v) for v in ours] if isinstance(ours, list) else float(ours)
        )
    if _int_scalar(ours) and all(_int_scalar(r) for r in refs):
        return min(refs) <= ours <= max(refs)
    return any(ours == r for r in refs)


def compare(
    name: str, refs: list[dict], ours: dict | None
) -> tuple[str, list[str], list[str]]:
    """Returns ('yes' | 'no' | '-', differing keys, deviation keys)."""
    if not refs or ours is None:
        return ("-" if not refs else "no"), [], []
    differing, deviations = [], []
    keys = set(ours).union(*refs)
    for key in sorted(keys):
        if is_deviation(name, key):
            deviations.append(key)
            continue
        values = [r.get(key) for r in refs]
        if key not in ours or any(key not in r for r in refs):
            differing.append(key)
        elif not compare_key(values, ours[key]):
            differing.append(key)
    return ("no" if differing else "yes"), differing, deviations


def _floats(value) -> bool:
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(isinstance(v, float) for v in items)


def _ints(value) -> bool:
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in items
    )


def _int_scalar(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def describe_refs(refs: list) -> str:
    """2.15's values for one key: a [min, max] range for numbers, else the set."""
    if all(_floats(r) or _ints(r) for r in refs) and any(_floats(r) for r in refs):
        lists = [r if isinstance(r, list) else [r] for r in refs]
        if len({len(r) for r in lists}) == 1:
            spans = [
                _span(min(r[i] for r in lists), max(r[i] for r in lists))
                for i in range(len(lists[0]))
            ]
            return (
                spans[0]
                if not isinstance(refs[0], list)
                else "[" + ", ".join(spans) + "]"
            )
    if all(_int_scalar(r) for r in refs) and min(refs) != max(refs):
        return f"{min(refs)}..{max(refs)}"
    distinct = []
    for r in refs:
        if r not in distinct:
            distinct.append(r)
    return " or ".join(json.dumps(d) for d in distinct)


def _span(lo: float, hi: float) -> str:
    return f"{lo:.4g}" if lo == hi else f"{lo:.4g}..{hi:.4g}"


def _value(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list) and value and all(isinstance(v, float) for v in value):
        return "[" + ", ".join(f"{v:.4g}" for v in value) + "]"
    return json.dumps(value)


def _selected(program: Path, names: list[str]) -> bool:
    """Whether --only's names (file names, stems or fnmatch patterns) pick it."""
    return any(
        fnmatch.fnmatchcase(program.name, n) or fnmatch.fnmatchcase(program.stem, n)
        for n in names
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="example, a subset with one 2.15 run each: python "
        "benchmarks/compat_programs.py --only 'cookbook_*' hooks.py "
        "--reference-runs 1",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        help="run only these programs of tests/programs/: file names, with or "
        "without .py, or shell patterns such as 'cookbook_*' (default: all)",
    )
    parser.add_argument(
        "--reference-runs",
        type=int,
        default=3,
        metavar="K",
        help="runs of each program under tf.estimator 2.15 (default 3)",
    )
    parser.add_argument(
        "--skip-reference",
        action="store_true",
        help="run only keras_estimator's side (no 2.15 runs, nothing compared)",
    )
    args = parser.parse_args(argv)
    if args.reference_runs < 1:
        parser.error(f"--reference-runs must be at least 1, got {args.reference_runs}")

    # 2.15's modules load byte-compiled (pip compiled them at install); so do
    # ours, as an installed wheel's would, even under PYTHONDONTWRITEBYTECODE,
    # which would otherwise have every run compile the package's sources.
    compileall.compile_dir(str(REPO / "keras_estimator"), quiet=1)
    programs = sorted(PROGRAMS.glob("*.py"))
    if args.only:
        unknown = [
            n for n in args.only if not any(_selected(p, [n]) for p in programs)
        ]
        if unknown:
            parser.error(f"no program in tests/programs/ matches {', '.join(unknown)}")
        programs = [p for p in programs if _selected(p, args.only)]
    ref_python = None if args.skip_reference else _ref_venv.ensure_reference_python()

    rows = []
    for program in programs:
        refs, ref_errors, ref_seconds = [], [], []
        for _ in range(args.reference_runs if ref_python else 0):
            ref, ref_error, ref_s = run(ref_python, program, ours=False)
            ref_seconds.append(ref_s)
            if ref is None:
                ref_errors.append(ref_error)
            else:
                refs.append(ref)
        ours, our_error, our_s = run(sys.executable, program, ours=True)
        match, differing, deviations = compare(program.name, refs, ours)
        rows.append(
            Row(
                program.name,
                refs,
                ref_errors,
                ref_seconds,
                ours,
                our_error,
                our_s,
                match,
                differing,
                deviations,
            )
        )
        ref_s = sum(ref_seconds) / len(ref_seconds) if ref_seconds else 0.0
        print(
            f"[{program.name}] 2.15 {len(refs)}/{len(ref_seconds)} runs, "
            f"{ref_s:.1f} s each; ours {our_s:.1f} s; match: {match}",
            file=sys.stderr,
            flush=True,
        )

    print(
        f"\n2.15: {args.reference_runs} runs per program. Floats: ours within 2.15's "
        f"[min, max] widened by {ABS_TOLERANCE} + {REL_TOLERANCE} x max(|min|, |max|); "
        "integers within [min, max]; anything else equal to one of 2.15's values. "
        "Deviations (documented) are not compared.\n"
    )
    print(
        "| program | key | tf.estimator 2.15 (range over runs) | keras_estimator | match |"
    )
    print("|---|---|---|---|---|")
    for row in rows:
        name, refs, ref_errors, ours = row.name, row.refs, row.ref_errors, row.ours
        differing, deviations = row.differing, row.deviations
        if not refs or ours is None:
            ref_text = ("FAILED: " + ref_errors[-1]) if ref_errors else "not run"
            our_text = "FAILED: " + row.our_error if ours is None else "ran"
            print(f"| {name} | - | {ref_text} | {our_text} | {row.match} |")
            continue
        failed_runs = (
            f" ({len(ref_errors)} runs failed: {ref_errors[-1]})" if ref_errors else ""
        )
        for key in sorted(set(ours).union(*refs)):
            values = [r.get(key, "(missing)") for r in refs]
            verdict = (
                "deviation"
                if key in deviations
                else "NO"
                if key in differing
                else "yes"
            )
            print(
                f"| {name} | {key} | {describe_refs(values)}{failed_runs} | "
                f"{_value(ours.get(key, '(missing)'))} | {verdict} |"
            )
    print()
    for row in rows:
        seconds = row.ref_seconds
        ref_s = sum(seconds) / len(seconds) if seconds else 0.0
        note = (
            f"; outside 2.15's range: {', '.join(row.differing)}"
            if row.differing
            else ""
        )
        dev = f"; deviations: {', '.join(row.deviations)}" if row.deviations else ""
        print(
            f"{row.name}: match {row.match} (2.15 {ref_s:.1f} s per run, "
            f"ours {row.our_s:.1f} s){note}{dev}"
        )
    matched = sum(row.match == "yes" for row in rows)
    print(f"\n{matched}/{len(rows)} programs match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
