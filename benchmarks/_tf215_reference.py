"""Reference-side benchmark: the original tf.estimator 2.15 on the shared workload.

This script owns the *tf.estimator 2.15* half of the keras_estimator speed
comparison. It runs under the reference interpreter (see ``_ref_venv.py``),
never under the project's own environment, and prints exactly ONE JSON line to
stdout; everything else (TF logs, warnings, progress) goes to stderr::

    /tmp/ref215/bin/python benchmarks/_tf215_reference.py [--train-steps N]
        [--predict-calls K] [--hook-every-step]

Workload (the keras_estimator side must run exactly this):

* data: ``rng = numpy.random.default_rng(0)``;
  ``x = rng.standard_normal((4096, 4), dtype=float32)``;
  ``w = rng.standard_normal((4, 3), dtype=float32)`` (drawn after ``x``);
  ``y = argmax(x @ w, axis=1).astype(int32)``. See :func:`make_workload_data`,
  which needs only NumPy and can be imported without TensorFlow.
* train input_fn: ``Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(32)``.
* model_fn: ``tf.compat.v1.layers.dense`` 4 -> 64 (relu) -> 64 (relu) -> 3;
  loss ``tf.compat.v1.losses.sparse_softmax_cross_entropy``;
  ``tf.compat.v1.train.AdamOptimizer(1e-3).minimize(loss, global_step=get_global_step())``;
  PREDICT returns ``{"logits", "class_ids"}``.
* ``RunConfig()`` defaults, only ``model_dir`` set (a fresh temp dir).

Measurements (all wall clock, ``time.perf_counter``; the two timed trains
also give their CPU time, ``time.process_time`` of all the process's threads,
as ``train_cpu_s`` and ``train_with_hook_cpu_s``):

* ``train_steps_per_sec``: after one ``train(steps=200)`` warm-up call, one
  ``train(steps=N)`` call timed end to end (graph build, session creation,
  checkpoint saves included, i.e. what a user waits for), reported as N / s.
* ``train_steps_per_sec_steady``: median of the ``global_step/sec`` values that
  tf.estimator's own StepCounterHook recorded (every ``log_step_count_steps``
  = 100 steps, the same numbers it logs at INFO level) during that timed call,
  read back from the model_dir events file. Excludes graph build and session
  setup.
* ``predict_call_ms``: mean over K calls of ``next(est.predict(input_fn))``
  where input_fn yields the single example ``{"x": x[:1]}`` (batch 1), each call
  a new generator as users write it. One untimed warm-up call precedes them
  (its time is reported as ``predict_first_call_ms``).
* ``train_steps_per_sec_with_hook`` (``--hook-every-step``): another timed
  ``train(steps=N)`` with a SessionRunHook whose ``before_run`` returns
  ``SessionRunArgs(loss)`` every step.
* ``train_steps_per_sec_with_logging_hook`` (``--hook-every-step``): one more,
  with ``LoggingTensorHook({"loss": <the loss's name>}, every_n_iter=1)``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np
from _runner import time_calls  # noqa: E402

N_EXAMPLES = 4096
N_FEATURES = 4
N_CLASSES = 3
DATA_SEED = 0
BATCH_SIZE = 32
HIDDEN_UNITS = (64, 64)
LEARNING_RATE = 1e-3
WARMUP_STEPS = 200


def make_workload_data(
    n: int = N_EXAMPLES, seed: int = DATA_SEED
) -> tuple[np.ndarray, np.ndarray]:
    """Builds the synthetic benchmark data set (NumPy only).

    Args:
        n: Number of examples.
        seed: Seed for ``numpy.random.default_rng``.

    Returns:
        ``(x, y)``: float32 ``[n, 4]`` features and int32 ``[n]`` labels, where
        ``y = argmax(x @ w)`` for a fixed random ``[4, 3]`` matrix ``w`` drawn
        from the same generator right after ``x``.
    """
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, N_FEATURES), dtype=np.float32)
    w = rng.standard_normal((N_FEATURES, N_CLASSES), dtype=np.float32)
    y = np.argmax(x @ w, axis=1).astype(np.int32)
    return x, y


def classifier_model_fn(tf, api, logits_fn, learning_rate: float = LEARNING_RATE):
    """A classifier model_fn on estimator API `api`, every benchmark's shape.

    Args:
        tf: the imported tensorflow module.
        api: ``tf.estimator`` or ``keras_estimator``.
        logits_fn: ``features -> logits``, built with TF1 layers.
        learning_rate: of the v1 Adam optimizer.

    PREDICT returns ``{"logits", "class_ids"}``; EVAL the loss and a
    ``tf.compat.v1.metrics.accuracy``; TRAIN v1 Adam on the global step.
    """

    def model_fn(features, labels, mode):
        logits = logits_fn(features)
        class_ids = tf.argmax(logits, 1)
        if mode == api.ModeKeys.PREDICT:
            return api.EstimatorSpec(
                mode, predictions={"logits": logits, "class_ids": class_ids}
            )
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        if mode == api.ModeKeys.EVAL:
            accuracy = tf.compat.v1.metrics.accuracy(labels, class_ids)
            return api.EstimatorSpec(
                mode, loss=loss, eval_metric_ops={"accuracy": accuracy}
            )
        train_op = tf.compat.v1.train.AdamOptimizer(learning_rate).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return api.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def workload_model_fn(tf, api, dense):
    """The workload's MLP model_fn (`classifier_model_fn`) on estimator API `api`.

    `dense` is ``tf.compat.v1.layers.dense`` or ``keras_estimator.compat.layers.dense``.
    """

    def logits_fn(features):
        net = features["x"]
        for units in HIDDEN_UNITS:
            net = dense(net, units, activation=tf.nn.relu)
        return dense(net, N_CLASSES)

    return classifier_model_fn(tf, api, logits_fn)


def workload_input_fns(tf, eval_examples: int = N_EXAMPLES):
    """The workload's input_fns: (train, eval, single example).

    train: ``Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(32)``;
    eval: the first `eval_examples` examples, batches of 32, once;
    single example: ``{"x": x[:1]}`` in one batch of 1.
    """
    x, y = make_workload_data()

    def train_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(BATCH_SIZE)

    def eval_input_fn():
        return tf.data.Dataset.from_tensor_slices(
            ({"x": x[:eval_examples]}, y[:eval_examples])
        ).batch(BATCH_SIZE)

    def single_example_input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": x[:1]}).batch(1)

    return train_input_fn, eval_input_fn, single_example_input_fn


def _build(tf):
    """Returns (model_fn, LossEveryStepHook class) bound to the imported tf module."""
    model_fn = workload_model_fn(tf, tf.estimator, tf.compat.v1.layers.dense)

    class LossEveryStepHook(tf.estimator.SessionRunHook):
        """Fetches the training loss on every step (a typical user hook)."""

        def __init__(self):
            self.n_fetched = 0
            self.last_loss = None
            self._loss = None

        def begin(self):
            # compat.v1.losses registers the loss here and Estimator adds the
            # spec's loss again; both are the same tensor.
            losses = list(
                {
                    id(t): t
                    for t in tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.LOSSES)
                }.values()
            )
            if len(losses) != 1:
                raise RuntimeError(
                    f"expected exactly one tensor in the LOSSES collection, found {losses}"
                )
            self._loss = losses[0]
            self.loss_name = self._loss.name

        def before_run(self, run_context):
            return tf.estimator.SessionRunArgs(self._loss)

        def after_run(self, run_context, run_values):
            self.n_fetched += 1
            self.last_loss = float(run_values.results)

    return model_fn, LossEveryStepHook


def _steady_steps_per_sec(
    tf, model_dir: str, first_step: int, last_step: int
) -> tuple[float | None, int]:
    """Median ``global_step/sec`` recorded by StepCounterHook for steps in (first_step, last_step]."""
    values = []
    for path in sorted(glob.glob(os.path.join(model_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            if not (first_step < event.step <= last_step):
                continue
            for value in event.summary.value:
                if value.tag == "global_step/sec":
                    values.append(value.simple_value)
    return (statistics.median(values) if values else None), len(values)


def run_benchmark(train_steps: int, predict_calls: int, hook_every_step: bool) -> dict:
    """Runs the measurements and returns the JSON-ready result dict."""
    from importlib.metadata import version

    import tensorflow as tf

    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    model_fn, LossEveryStepHook = _build(tf)
    train_input_fn, _, single_example_input_fn = workload_input_fns(tf)

    result: dict = {
        "impl": "tf.estimator",
        "tensorflow_version": tf.__version__,
        "estimator_version": version("tensorflow-estimator"),
        "keras_version": version("keras"),
        "python_version": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "workload": {
            "n_examples": N_EXAMPLES,
            "batch_size": BATCH_SIZE,
            "layers": [N_FEATURES, *HIDDEN_UNITS, N_CLASSES],
            "optimizer": f"AdamOptimizer({LEARNING_RATE})",
            "data_seed": DATA_SEED,
        },
        "train_steps": train_steps,
        "warmup_steps": WARMUP_STEPS,
        "predict_calls": predict_calls,
        "steady_method": "median of StepCounterHook global_step/sec summaries during the timed train call",
    }

    with tempfile.TemporaryDirectory(prefix="tf215_bench_") as model_dir:
        est = tf.estimator.Estimator(
            model_fn=model_fn, config=tf.estimator.RunConfig(model_dir=model_dir)
        )

        t0 = time.perf_counter()
        est.train(train_input_fn, steps=WARMUP_STEPS)
        result["warmup_train_s"] = time.perf_counter() - t0
        print(
            f"warm-up train({WARMUP_STEPS}) took {result['warmup_train_s']:.2f}s",
            file=sys.stderr,
        )

        step_before = est.get_variable_value("global_step")
        t0, c0 = time.perf_counter(), time.process_time()
        est.train(train_input_fn, steps=train_steps)
        elapsed = time.perf_counter() - t0
        result["train_cpu_s"] = time.process_time() - c0
        step_after = est.get_variable_value("global_step")
        if step_after - step_before != train_steps:
            raise RuntimeError(
                f"timed train ran {step_after - step_before} steps, expected {train_steps}"
            )
        result["train_s"] = elapsed
        result["train_steps_per_sec"] = train_steps / elapsed
        steady, n_samples = _steady_steps_per_sec(
            tf, model_dir, int(step_before), int(step_after)
        )
        result["train_steps_per_sec_steady"] = steady
        result["steady_samples"] = n_samples
        print(
            f"train({train_steps}) took {elapsed:.2f}s; steady {steady} steps/s",
            file=sys.stderr,
        )

        if hook_every_step:
            hook = LossEveryStepHook()
            t0, c0 = time.perf_counter(), time.process_time()
            est.train(train_input_fn, steps=train_steps, hooks=[hook])
            elapsed = time.perf_counter() - t0
            result["train_with_hook_cpu_s"] = time.process_time() - c0
            if hook.n_fetched != train_steps:
                raise RuntimeError(
                    f"hook saw {hook.n_fetched} steps, expected {train_steps}"
                )
            result["train_with_hook_s"] = elapsed
            result["train_steps_per_sec_with_hook"] = train_steps / elapsed
            result["hook_last_loss"] = hook.last_loss
            print(
                f"train({train_steps}) with per-step loss hook took {elapsed:.2f}s",
                file=sys.stderr,
            )
            # The stock hook logging the loss every step (INFO lines, which
            # the default WARN verbosity drops, as on the other side).
            logging_hook = tf.compat.v1.train.LoggingTensorHook(
                {"loss": hook.loss_name}, every_n_iter=1
            )
            t0, c0 = time.perf_counter(), time.process_time()
            est.train(train_input_fn, steps=train_steps, hooks=[logging_hook])
            elapsed = time.perf_counter() - t0
            result["train_with_logging_hook_cpu_s"] = time.process_time() - c0
            result["train_with_logging_hook_s"] = elapsed
            result["train_steps_per_sec_with_logging_hook"] = train_steps / elapsed

        t0 = time.perf_counter()
        first = next(est.predict(single_example_input_fn))
        result["predict_first_call_ms"] = (time.perf_counter() - t0) * 1e3
        if first["logits"].shape != (N_CLASSES,):
            raise RuntimeError(f"unexpected prediction {first}")
        times_ms = time_calls(lambda: next(est.predict(single_example_input_fn)), predict_calls)
        result["predict_call_ms"] = statistics.fmean(times_ms)
        result["predict_call_ms_median"] = statistics.median(times_ms)
        print(
            f"predict: {result['predict_call_ms']:.1f} ms/call over {predict_calls} calls",
            file=sys.stderr,
        )
    return result


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: prints one JSON line with the measurements."""
    parser = argparse.ArgumentParser(
        description="tf.estimator 2.15 reference benchmark (one JSON line on stdout)"
    )
    parser.add_argument(
        "--train-steps",
        type=int,
        default=5000,
        help="steps in the timed train call (default 5000)",
    )
    parser.add_argument(
        "--predict-calls",
        type=int,
        default=100,
        help="timed single-example predict calls (default 100)",
    )
    parser.add_argument(
        "--hook-every-step",
        action="store_true",
        help="also time training with a loss-fetching SessionRunHook",
    )
    args = parser.parse_args(argv)
    if args.train_steps <= 0 or args.predict_calls <= 0:
        parser.error("--train-steps and --predict-calls must be positive")

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow_estimator  # noqa: F401
    except ImportError:
        parser.error(
            "tensorflow_estimator is not importable: run this with the TF 2.15 reference python "
            "(see `python benchmarks/_ref_venv.py`)"
        )
    result = run_benchmark(args.train_steps, args.predict_calls, args.hook_every_step)
    sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
