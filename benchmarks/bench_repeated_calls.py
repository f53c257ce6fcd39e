"""Cold start and repeated evaluate()/predict() calls: keras_estimator vs tf.estimator 2.15.

What a user pays to get a first step, and then per call when calling
``evaluate`` or ``predict`` again and again on a trained model_dir (an
evaluator loop, a service answering single requests), once the first call has
built whatever it builds. Both sides run the same workload, each in a fresh
subprocess of its own (never both at once), the reference first in even
rounds and last in odd ones (``_runner.alternating_rounds``):

* models (``--models``): ``mlp``, the MLP 4-64-64-3 of ``_tf215_reference.py``
  on its data (4096 x 4 float32, 3 classes, batch 32); ``cnn`` and
  ``wide_mlp``, the compute-bound models of ``bench_compute_bound.py`` on
  their data (batch 64 and 128). All are ``_tf215_reference.classifier_model_fn``
  (TF1 layers: ``tf.compat.v1.layers`` there, ``keras_estimator.compat.layers``
  here; v1 Adam; EVAL returns the loss and a ``tf.compat.v1.metrics.accuracy``)
  with ``RunConfig()`` defaults and a fresh model_dir;
* cold start: in the fresh process, after the imports (tf.estimator's
  package, which TF 2.15 imports on first use, included), ``Estimator(...)``
  to the end of ``train(steps=1)``; training then goes on to ``TRAIN_STEPS``
  (200 steps for the MLP, 10 for the others);
* evaluate: ``evaluate(input_fn)`` on the first 20 batches of the data, to the
  end of the input. One untimed call, then ``--eval-calls`` timed calls;
* predict: ``next(est.predict(input_fn))`` on the single first example
  (batch 1), a fresh generator each call. One untimed call, then
  ``--predict-calls`` timed calls.

Each side reports the median ms per call of its timed calls, in wall time
and in CPU time (``time.process_time``: all the process's threads, which
other jobs on a shared machine move far less than wall time); the ratios
(theirs / ours, higher is better for keras_estimator; cold start: ours /
theirs, lower is better) are taken within each round, and the report gives
their median with the lowest and highest round::

    python benchmarks/bench_repeated_calls.py [--rounds 3] [--eval-calls 20]
        [--predict-calls 50] [--models mlp,cnn,wide_mlp]

``--side ours|ref --model NAME`` runs one side in this process and prints its
JSON line (the ``ref`` side needs the reference interpreter of ``_ref_venv.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from _runner import (  # noqa: E402
    alternating_rounds,
    make_log,
    median_range,
    ratio_line,
    run_json,
    time_calls,
)

EVAL_BATCHES = 20
# Steps trained before the calls are timed: the compute-bound models train
# slowly on 2.15 and need no more to evaluate and predict.
TRAIN_STEPS = {"mlp": 200, "cnn": 10, "wide_mlp": 10}
TIMED = ("cold_start_ms", "evaluate_call_ms", "predict_call_ms")
TIMED_CPU = tuple(key.replace("_ms", "_cpu_ms") for key in TIMED)

_log = make_log("bench_repeated_calls")


def _workload(model: str, tf: Any, api: Any, compat_layers: Any) -> tuple[Any, ...]:
    """(model_fn, train input_fn, eval input_fn, single-example input_fn, classes)."""
    if model == "mlp":
        from _tf215_reference import (
            BATCH_SIZE,
            N_CLASSES,
            workload_input_fns,
            workload_model_fn,
        )

        fns = workload_input_fns(tf, eval_examples=EVAL_BATCHES * BATCH_SIZE)
        return (workload_model_fn(tf, api, compat_layers.dense), *fns, N_CLASSES)
    from bench_compute_bound import MODELS, model_data, model_fn_for

    x, y = model_data(model)
    batch = MODELS[model]["batch"]
    eval_examples = EVAL_BATCHES * batch

    def train_input_fn():
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(batch)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(
            (x[:eval_examples], y[:eval_examples])
        ).batch(batch)

    def single_example_input_fn():
        return tf.data.Dataset.from_tensor_slices(x[:1]).batch(1)

    model_fn = model_fn_for(model, tf, api, compat_layers)
    return model_fn, train_input_fn, eval_input_fn, single_example_input_fn, 10


def run_side(side: str, model: str, eval_calls: int, predict_calls: int) -> dict[str, Any]:
    """Times a cold start, then repeated evaluate and predict calls on one side."""
    import tensorflow as tf

    if side == "ref":
        tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
        api = tf.estimator
        # TF 2.15 imports tensorflow_estimator on the first use of a
        # tf.estimator name (60-70 ms of CPU): done here, before the clock
        # starts, as `import keras_estimator` is on our side.
        api.Estimator  # noqa: B018
        compat_layers = tf.compat.v1.layers
    else:
        import keras_estimator

        api = keras_estimator
        compat_layers = keras_estimator.compat.layers
    model_fn, train_input_fn, eval_input_fn, single_input_fn, classes = _workload(
        model, tf, api, compat_layers
    )
    steps = TRAIN_STEPS[model]
    result: dict[str, Any] = {"side": side, "model": model, "tensorflow_version": tf.__version__}
    with tempfile.TemporaryDirectory(prefix=f"bench_calls_{side}_") as model_dir:
        started, started_cpu = time.perf_counter(), time.process_time()
        est = api.Estimator(model_fn, config=api.RunConfig(model_dir=model_dir))
        est.train(train_input_fn, steps=1)
        result["cold_start_ms"] = (time.perf_counter() - started) * 1e3
        result["cold_start_cpu_ms"] = (time.process_time() - started_cpu) * 1e3
        est.train(train_input_fn, steps=steps - 1)

        started = time.perf_counter()
        first = est.evaluate(eval_input_fn)
        result["evaluate_first_call_ms"] = (time.perf_counter() - started) * 1e3
        if int(first["global_step"]) != steps:
            raise RuntimeError(f"unexpected evaluation {first}")
        metrics = []
        times = time_calls(lambda: metrics.append(est.evaluate(eval_input_fn)), eval_calls)
        if any(m["accuracy"] != first["accuracy"] for m in metrics):
            raise RuntimeError("repeated evaluations disagree")
        result["evaluate_call_ms"] = statistics.median(times)
        cpu = time_calls(lambda: est.evaluate(eval_input_fn), eval_calls, time.process_time)
        result["evaluate_call_cpu_ms"] = statistics.median(cpu)
        result["evaluate_accuracy"] = float(first["accuracy"])

        started = time.perf_counter()
        prediction = next(est.predict(single_input_fn))
        result["predict_first_call_ms"] = (time.perf_counter() - started) * 1e3
        if tuple(prediction["logits"].shape) != (classes,):
            raise RuntimeError(f"unexpected prediction {prediction}")
        times = time_calls(lambda: next(est.predict(single_input_fn)), predict_calls)
        result["predict_call_ms"] = statistics.median(times)
        cpu = time_calls(
            lambda: next(est.predict(single_input_fn)), predict_calls, time.process_time
        )
        result["predict_call_cpu_ms"] = statistics.median(cpu)
    return result


def _range(values: list[float], digits: int = 1) -> str:
    median, low, high = median_range(values)
    return f"{median:.{digits}f} ({low:.{digits}f}-{high:.{digits}f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--eval-calls", type=int, default=20)
    parser.add_argument("--predict-calls", type=int, default=50)
    parser.add_argument("--models", default="mlp,cnn,wide_mlp")
    parser.add_argument("--side", choices=("ours", "ref"))
    parser.add_argument("--model", default="mlp", choices=tuple(TRAIN_STEPS))
    args = parser.parse_args(argv)
    models = [name for name in args.models.split(",") if name]
    if min(args.rounds, args.eval_calls, args.predict_calls) <= 0:
        parser.error("--rounds, --eval-calls and --predict-calls must be positive")
    if not models or any(name not in TRAIN_STEPS for name in models):
        parser.error(f"--models takes names among {', '.join(TRAIN_STEPS)}")
    if args.side:
        result = run_side(args.side, args.model, args.eval_calls, args.predict_calls)
        sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")
        return 0

    from _ref_venv import ensure_reference_python

    pythons = {"ref": ensure_reference_python(), "ours": sys.executable}
    summary: dict[str, Any] = {"rounds": args.rounds, "models": {}}
    for model in models:

        def run(side: str, model: str = model) -> dict[str, Any]:
            cmd = [
                pythons[side], Path(__file__).resolve(), "--side", side, "--model", model,
                "--eval-calls", args.eval_calls, "--predict-calls", args.predict_calls,
            ]
            return run_json(cmd, f"the {side} side ({model})", _log)

        rounds = alternating_rounds(args.rounds, ("ref", "ours"), run)
        ratios = {
            key: [
                (r["ours"][key] / r["ref"][key])
                if key.startswith("cold_start")
                else (r["ref"][key] / r["ours"][key])
                for r in rounds
            ]
            for key in TIMED + TIMED_CPU
        }
        figures = {
            side: {key: [r[side][key] for r in rounds] for key in TIMED + TIMED_CPU}
            for side in ("ref", "ours")
        }
        print(
            f"\n{model}: median ms (lowest-highest) over {args.rounds} rounds, each the "
            f"median of {args.eval_calls} evaluate calls of {EVAL_BATCHES} batches, "
            f"{args.predict_calls} single-example predict calls; cold start: one per "
            "fresh process; wall time, then CPU time"
        )
        print(f"{'':<28} {'tf.estimator 2.15':>22} {'keras_estimator':>22}")
        labels = ("cold start ms", "evaluate() ms per call", "predict() ms per call")
        for keys, clock in ((TIMED, "wall"), (TIMED_CPU, "CPU")):
            for key, label in zip(keys, labels, strict=True):
                print(
                    f"{label + ', ' + clock:<28} {_range(figures['ref'][key]):>22} "
                    f"{_range(figures['ours'][key], 2):>22}"
                )
        for suffix, clock in (("_ms", "wall"), ("_cpu_ms", "CPU")):
            print(ratio_line(f"evaluate() per call, {clock} (2.15 / ours)",
                             ratios["evaluate_call" + suffix], width=40))
            print(ratio_line(f"predict() per call, {clock} (2.15 / ours)",
                             ratios["predict_call" + suffix], width=40))
            print(ratio_line(f"cold start, {clock} (ours / 2.15)",
                             ratios["cold_start" + suffix], width=40, digits=2))
        summary["models"][model] = {
            "medians": {
                side: {key: statistics.median(v) for key, v in figures[side].items()}
                for side in figures
            },
            "ratios": {key: statistics.median(v) for key, v in ratios.items()},
            "ratios_per_round": ratios,
            "per_round": figures,
        }
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
