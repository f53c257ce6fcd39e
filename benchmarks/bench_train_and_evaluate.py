"""Evaluation set-up cost in train_and_evaluate: keras_estimator vs tf.estimator 2.15.

Both sides run ``_tf215_train_and_evaluate.run_train_and_evaluate`` (the same
code, given ``tf.estimator`` or ``keras_estimator``): ``train_and_evaluate``
on the core benchmark MLP with a checkpoint, and so an evaluation of 100
batches, every 1,000 steps (``throttle_secs=0``). See that module for what is
timed; in short, per evaluation::

    setup = (time of the Estimator.evaluate call) - (time running its eval steps)

and ``setup fraction = sum(setup) / wall time of train_and_evaluate``; also
``n * median(setup) / wall``, which a one-off stall inside one evaluation
does not move.

tf.estimator 2.15 runs first, in its own interpreter (``_ref_venv.py``; set
``KERAS_ESTIMATOR_REF_VENV`` to reuse a venv), then keras_estimator in this
process; never both at once::

    python benchmarks/bench_train_and_evaluate.py [--train-steps 10000] [--skip-reference]

Progress goes to stderr; stdout gets a table, the ratios and, as its last
line, one JSON object with every number.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from _ref_venv import ensure_reference_python  # noqa: E402
from _runner import make_log, run_json  # noqa: E402
from _tf215_train_and_evaluate import (  # noqa: E402
    DEFAULT_TRAIN_STEPS,
    EVAL_EVERY_STEPS,
    run_train_and_evaluate,
)

REFERENCE_SCRIPT = _HERE / "_tf215_train_and_evaluate.py"


_log = make_log("bench_train_and_evaluate")


def run_reference(train_steps: int) -> dict[str, Any]:
    """Runs the tf.estimator 2.15 side in the reference interpreter."""
    python = ensure_reference_python()
    cmd = [python, str(REFERENCE_SCRIPT), "--train-steps", str(train_steps)]
    return run_json(cmd, "the tf.estimator 2.15 reference", _log)


def run_keras_estimator(train_steps: int) -> dict[str, Any]:
    """Runs the same workload on keras_estimator in this process."""
    from importlib.metadata import version

    import tensorflow as tf

    import keras_estimator

    logging.getLogger("keras_estimator").setLevel(logging.WARNING)
    result = run_train_and_evaluate(
        tf, keras_estimator, keras_estimator.compat.layers.dense, train_steps
    )
    result.update(
        impl="keras_estimator",
        tensorflow_version=tf.__version__,
        keras_version=version("keras"),
        python_version=platform.python_version(),
    )
    return result


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def _row(label: str, result: dict[str, Any]) -> str:
    median = result["setup_ms_median_after_first"]
    return (
        f"| {label} | {result['wall_s']:.2f} | {result['n_evaluations']} | "
        f"{result['eval_call_s_total']:.2f} | {result['eval_setup_s_total']:.2f} | "
        f"{100 * result['setup_fraction']:.1f}% | "
        f"{100 * result['setup_fraction_after_first']:.1f}% | "
        f"{100 * result['setup_fraction_median_based']:.1f}% | "
        f"{result['setup_ms_first']:.0f} | "
        f"{'-' if median is None else f'{median:.0f}'} | "
        f"{result['setup_ms_max']:.0f} |"
    )


def report(ours: dict[str, Any], reference: dict[str, Any] | None) -> dict[str, Any]:
    """Prints the table and ratios; returns the ratios."""
    print(
        f"\ntrain_and_evaluate, {ours['train_steps']} steps, evaluation of "
        f"{ours['eval_steps']} batches every {EVAL_EVERY_STEPS} steps\n"
    )
    print(
        "| implementation | wall s | evaluations | evaluate() s | setup s | "
        "setup fraction | setup fraction (2nd eval on) | "
        "setup fraction (median-based) | setup ms, 1st | "
        "setup ms, median of the rest | setup ms, max |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    if reference is not None:
        print(_row(f"tf.estimator {reference['estimator_version']}", reference))
    print(_row("keras_estimator", ours))
    ratios: dict[str, Any] = {}
    if reference is not None:
        ratios = {
            "setup_fraction_ref_over_ours": _ratio(
                reference["setup_fraction"], ours["setup_fraction"]
            ),
            "setup_fraction_after_first_ref_over_ours": _ratio(
                reference["setup_fraction_after_first"],
                ours["setup_fraction_after_first"],
            ),
            "setup_fraction_median_based_ref_over_ours": _ratio(
                reference["setup_fraction_median_based"],
                ours["setup_fraction_median_based"],
            ),
            "setup_ms_median_ref_over_ours": _ratio(
                reference["setup_ms_median_after_first"],
                ours["setup_ms_median_after_first"],
            ),
            "wall_ref_over_ours": _ratio(reference["wall_s"], ours["wall_s"]),
        }
        print("\nratios (tf.estimator / keras_estimator):")
        for key, value in ratios.items():
            print(f"  {key}: {'-' if value is None else f'{value:.1f}x'}")
    return ratios


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--train-steps",
        type=int,
        default=DEFAULT_TRAIN_STEPS,
        help=f"TrainSpec.max_steps (default {DEFAULT_TRAIN_STEPS})",
    )
    parser.add_argument(
        "--skip-reference", action="store_true", help="only run keras_estimator"
    )
    args = parser.parse_args(argv)
    if args.train_steps < EVAL_EVERY_STEPS:
        parser.error(f"--train-steps must be at least {EVAL_EVERY_STEPS}")

    reference = None
    if not args.skip_reference:
        start = time.perf_counter()
        reference = run_reference(args.train_steps)
        _log(f"reference done in {time.perf_counter() - start:.1f}s")
    _log("running keras_estimator")
    ours = run_keras_estimator(args.train_steps)
    ratios = report(ours, reference)
    print(
        json.dumps(
            {"keras_estimator": ours, "tf_estimator_2_15": reference, "ratios": ratios},
            sort_keys=True,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
