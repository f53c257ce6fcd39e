"""train_and_evaluate with an evaluation every 1,000 steps: where the time goes.

Runs ``train_and_evaluate`` on the core benchmark MLP (see
``_tf215_reference.py`` for the data and the model) and measures how much of
the wall time goes to *setting up* evaluations rather than running them.

The measurement is written once, against an estimator API module, so both
sides run exactly the same code:

* ``tf.estimator`` 2.15 when this file runs as a script under the reference
  interpreter (``benchmarks/_ref_venv.py``), printing one JSON line;
* ``keras_estimator`` when ``bench_train_and_evaluate.py`` imports
  :func:`run_train_and_evaluate` and passes it that package.

Workload: ``RunConfig(save_checkpoints_steps=1000)``, otherwise defaults;
``TrainSpec(train_input_fn, max_steps=N)``; ``EvalSpec(eval_input_fn,
steps=100, throttle_secs=0, start_delay_secs=0)`` so every checkpoint after
the first is evaluated (N / 1000 evaluations). Eval input: the same 4,096
examples, ``batch(32)``, no repeat; the EVAL spec adds
``tf.compat.v1.metrics.accuracy``.

What is measured (``time.perf_counter``):

* ``wall_s``: the whole ``train_and_evaluate`` call.
* per evaluation, ``call_s``: the ``Estimator.evaluate`` call (timed by a
  wrapper set on the Estimator instance), and ``steps_s``: from the first evaluation hook
  ``before_run`` to the last ``after_run``, i.e. the time spent running the
  100 eval steps. The hook asks for no values and, on keras_estimator, does
  not prevent fusing (``steps_until_needed`` returns None).
* ``setup_s = call_s - steps_s``: everything else an evaluation costs:
  building or reusing the eval graph, creating the session, restoring the
  checkpoint, building the input pipeline, writing summaries.
* ``setup_fraction = sum(setup_s) / wall_s``, also without the first
  evaluation (``setup_fraction_after_first``): keras_estimator traces its
  eval function during the first evaluation's first run, which this split
  counts as steps, while tf.estimator builds its graph before the first run
  on every evaluation.
* ``setup_fraction_median_based = n_evaluations * median(setup_s) / wall_s``:
  a one-off pause that lands inside one evaluation (on keras_estimator,
  Python's garbage collector was seen to stall 0.2-2.4 s, with the process
  idle, at one evaluation per run) counts fully in ``setup_fraction`` but
  not here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from _tf215_reference import workload_input_fns, workload_model_fn  # noqa: E402

EVAL_EVERY_STEPS = 1000
EVAL_STEPS = 100
DEFAULT_TRAIN_STEPS = 10_000


def _build(tf: Any, api: Any, dense: Any) -> tuple[Any, Any]:
    """Returns (model_fn, eval timing hook class) for `api`."""

    model_fn = workload_model_fn(tf, api, dense)

    class EvalStepsTimer(api.SessionRunHook):
        """Times the span from the first eval run's start to the last one's end."""

        def __init__(self) -> None:
            self.first_before_run: float | None = None
            self.last_after_run: float | None = None

        def steps_until_needed(self, global_step: int) -> None:
            return None  # keras_estimator: never needs a run boundary

        def begin(self) -> None:
            self.first_before_run = None
            self.last_after_run = None

        def before_run(self, run_context):
            if self.first_before_run is None:
                self.first_before_run = time.perf_counter()
            return None

        def after_run(self, run_context, run_values):
            self.last_after_run = time.perf_counter()

    return model_fn, EvalStepsTimer


def _time_evaluations(est: Any, timer: Any, records: list[dict[str, float]]) -> None:
    """Wraps `est.evaluate` to record each call and the span of its eval steps.

    An instance attribute, not a subclass: tf.estimator forbids subclasses
    that override Estimator methods.
    """
    evaluate = est.evaluate

    def timed_evaluate(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        result = evaluate(*args, **kwargs)
        call_s = time.perf_counter() - start
        if timer.first_before_run is None or timer.last_after_run is None:
            raise RuntimeError("the evaluation ran no step")
        steps_s = timer.last_after_run - timer.first_before_run
        records.append(
            {
                "global_step": int(result["global_step"]),
                "call_s": call_s,
                "steps_s": steps_s,
                "setup_s": call_s - steps_s,
            }
        )
        return result

    est.evaluate = timed_evaluate


def run_train_and_evaluate(tf: Any, api: Any, dense: Any, train_steps: int) -> dict[str, Any]:
    """Runs the workload on estimator API `api`; returns the measurements.

    Args:
        tf: the imported tensorflow module.
        api: `tf.estimator` or `keras_estimator`.
        dense: the TF1 dense layer function (`tf.compat.v1.layers.dense` or
            `keras_estimator.compat.layers.dense`).
        train_steps: `TrainSpec.max_steps`.
    """
    model_fn, EvalStepsTimer = _build(tf, api, dense)
    train_input_fn, eval_input_fn, _ = workload_input_fns(tf)

    with tempfile.TemporaryDirectory(prefix="bench_tae_") as model_dir:
        config = api.RunConfig(model_dir=model_dir, save_checkpoints_steps=EVAL_EVERY_STEPS)
        est = api.Estimator(model_fn, config=config)
        timer = EvalStepsTimer()
        records: list[dict[str, float]] = []
        _time_evaluations(est, timer, records)
        train_spec = api.TrainSpec(train_input_fn, max_steps=train_steps)
        eval_spec = api.EvalSpec(
            eval_input_fn,
            steps=EVAL_STEPS,
            hooks=[timer],
            start_delay_secs=0,
            throttle_secs=0,
        )
        start = time.perf_counter()
        metrics, _ = api.train_and_evaluate(est, train_spec, eval_spec)
        wall_s = time.perf_counter() - start
    if not records or metrics is None:
        raise RuntimeError("train_and_evaluate made no evaluation")
    setup = [r["setup_s"] for r in records]
    calls = [r["call_s"] for r in records]
    return {
        "train_steps": train_steps,
        "eval_every_steps": EVAL_EVERY_STEPS,
        "eval_steps": EVAL_STEPS,
        "wall_s": wall_s,
        "n_evaluations": len(records),
        "evaluated_steps": [r["global_step"] for r in records],
        "eval_call_s_total": sum(calls),
        "eval_steps_s_total": sum(r["steps_s"] for r in records),
        "eval_setup_s_total": sum(setup),
        "setup_fraction": sum(setup) / wall_s,
        "setup_fraction_after_first": sum(setup[1:]) / wall_s,
        "eval_fraction": sum(calls) / wall_s,
        # Robust to one-off stalls (see the module docstring): every
        # evaluation charged the median set-up time.
        "setup_fraction_median_based": len(setup) * statistics.median(setup) / wall_s,
        "setup_ms_first": setup[0] * 1e3,
        "setup_ms_max": max(setup) * 1e3,
        "setup_ms_median_after_first": (
            statistics.median(setup[1:]) * 1e3 if len(setup) > 1 else None
        ),
        "final_loss": float(metrics["loss"]),
        "final_accuracy": float(metrics["accuracy"]),
        "records": records,
    }


def main(argv: list[str] | None = None) -> int:
    """Runs the tf.estimator 2.15 side; prints one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-steps", type=int, default=DEFAULT_TRAIN_STEPS)
    args = parser.parse_args(argv)
    if args.train_steps < EVAL_EVERY_STEPS:
        parser.error(f"--train-steps must be at least {EVAL_EVERY_STEPS}")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow as tf
        import tensorflow_estimator  # noqa: F401
    except ImportError:
        parser.error("run this with the TF 2.15 reference python (benchmarks/_ref_venv.py)")
    from importlib.metadata import version

    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    result = run_train_and_evaluate(tf, tf.estimator, tf.compat.v1.layers.dense, args.train_steps)
    result.update(
        impl="tf.estimator",
        tensorflow_version=tf.__version__,
        estimator_version=version("tensorflow-estimator"),
        python_version=platform.python_version(),
    )
    sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
