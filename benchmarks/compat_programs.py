"""tests/programs/ side by side: tf.estimator 2.15 against keras_estimator.

Runs every program in tests/programs/ twice, one at a time: with plain
TensorFlow 2.15.1 + tensorflow-estimator 2.15.0 in the reference venv
(`_ref_venv.py`; set KERAS_ESTIMATOR_REF_VENV to reuse one), and here after
`keras_estimator.install()`. Prints a table: program, 2.15's RESULT, ours,
and whether they match.

Match rule: every RESULT value that is not a float (global steps, counts,
keys, flags, checkpoint names) must be equal; floats (metrics, losses) must
agree within FLOAT_ABS_TOLERANCE absolute. The two implementations draw
different initial weights and shuffles, so a few dozen to a few hundred steps
leave metrics apart by training noise, not by error. Keys in NOISY hold
values that depend on the training trajectory itself (e.g. when early
stopping fires), or a documented deviation, and are shown but not
compared.

    python benchmarks/compat_programs.py [--only NAME ...] [--skip-reference]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROGRAMS = REPO / "tests" / "programs"
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _ref_venv  # noqa: E402

TIMEOUT_S = 300
FLOAT_ABS_TOLERANCE = 0.15
# Values set by the training trajectory rather than by the API's semantics.
NOISY = {
    # 3 Adagrad steps from a random initial kernel: the loss is the initial one.
    "migration_guide_model_fn.py": {"eval_losses"},
    # The step at which the eval loss last improved.
    "early_stopping.py": {"global_step"},
    # Sums of a randomly initialised kernel and of the bias trained with it.
    "object_based_checkpoint.py": {"kernel_sum", "bias_sum"},
    # Not noise: 2.15 ran only the Keras 2 optimizer's iteration increment
    # that apply_gradients returned, never its updates (accuracy of an
    # untrained model); here the updates run.
    "keras_layers_keras_optimizer.py": {"accuracy"},
    # The loss after one step from random weights (2.15's own runs: 4.9 to 5.9).
    "autoencoder_features_only.py": {"loss_before"},
    # Unseeded, 1000 Adagrad steps: 2.15's own runs predicted the second
    # flower as Versicolor or Virginica (accuracy 0.63 to 0.77).
    "premade_estimators_tutorial.py": {"predicted"},
    # 3 unseeded Adagrad steps: the initial kernel's (2.15: loss 0.98 to 10.3).
    "metrics_optimizers_guide.py": {"accuracy", "loss"},
    # Not noise: under install(), disable_v2_behavior() keeps eager on by design.
    "tf1_style_script.py": {"executing_eagerly"},
}
LAUNCHER = (
    "import keras_estimator, runpy, sys; keras_estimator.install(); "
    "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def run(python: str, program: Path, ours: bool) -> tuple[dict | None, str, float]:
    """Runs one program; returns (RESULT dict or None, error line, seconds)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONHASHSEED="0")
    command = [python, "-c", LAUNCHER, str(program)] if ours else [python, str(program)]
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


def compare(name: str, ref: dict | None, ours: dict | None) -> tuple[str, list[str]]:
    """Returns ('yes' | 'no' | '-', the differing keys)."""
    if ref is None or ours is None:
        return ("-" if ref is None else "no"), []
    noisy = NOISY.get(name, set())
    differing = []
    for key in sorted(set(ref) | set(ours)):
        if key in noisy:
            continue
        a, b = ref.get(key), ours.get(key)
        if _floats(a) and _floats(b):
            a_list = a if isinstance(a, list) else [a]
            b_list = b if isinstance(b, list) else [b]
            if len(a_list) != len(b_list) or any(
                abs(x - y) > FLOAT_ABS_TOLERANCE
                for x, y in zip(a_list, b_list, strict=True)
            ):
                differing.append(key)
        elif a != b:
            differing.append(key)
    return ("no" if differing else "yes"), differing


def _floats(value) -> bool:
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(isinstance(v, float) for v in items)


def _short(result: dict | None, error: str) -> str:
    if result is None:
        return "FAILED: " + error
    return json.dumps(result, sort_keys=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="program file names to run")
    parser.add_argument("--skip-reference", action="store_true")
    args = parser.parse_args(argv)

    programs = sorted(PROGRAMS.glob("*.py"))
    if args.only:
        programs = [p for p in programs if p.name in set(args.only)]
    ref_python = None if args.skip_reference else _ref_venv.ensure_reference_python()

    rows = []
    for program in programs:
        ref, ref_error, ref_s = (
            run(ref_python, program, ours=False)
            if ref_python
            else (None, "skipped", 0.0)
        )
        ours, our_error, our_s = run(sys.executable, program, ours=True)
        match, differing = compare(program.name, ref, ours)
        rows.append(
            (
                program.name,
                ref,
                ref_error,
                ref_s,
                ours,
                our_error,
                our_s,
                match,
                differing,
            )
        )
        print(
            f"[{program.name}] 2.15 {ref_s:.1f} s, ours {our_s:.1f} s, match: {match}",
            file=sys.stderr,
            flush=True,
        )

    print(
        f"\nfloats compared within {FLOAT_ABS_TOLERANCE} absolute; NOISY keys not compared\n"
    )
    print("| program | tf.estimator 2.15 | keras_estimator | match |")
    print("|---|---|---|---|")
    for name, ref, ref_error, ref_s, ours, our_error, our_s, match, differing in rows:
        note = f" (differs: {', '.join(differing)})" if differing else ""
        print(
            f"| {name} | {_short(ref, ref_error)} [{ref_s:.1f} s] | "
            f"{_short(ours, our_error)} [{our_s:.1f} s] | {match}{note} |"
        )
    matched = sum(row[7] == "yes" for row in rows)
    print(f"\n{matched}/{len(rows)} programs match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
