"""Core speed comparison: keras_estimator vs tf.estimator 2.15, Keras fit, fused loop.

One invocation measures the same work four ways and prints them side by side:

1. ``keras_estimator``: ``keras_estimator.Estimator`` with the default
   ``RunConfig`` and a TF1-style model_fn (``keras_estimator.compat.layers.dense``,
   ``tf.compat.v1.train.AdamOptimizer``), exactly the reference's model_fn with
   ``tf.compat.v1.layers`` swapped for ``keras_estimator.compat.layers``;
2. plain Keras 3 ``fit`` on the same MLP (``steps_per_execution=1``);
3. the "fused limit": the same Keras model and Adam optimizer, all N steps in
   ONE ``tf.function`` (``for _ in tf.range(n)`` over a dataset iterator) -- a
   bound on what any per-step framework can reach for this model on this host;
4. the original ``tf.estimator`` 2.15, run in its own interpreter through
   ``benchmarks/_tf215_reference.py`` (see ``benchmarks/_ref_venv.py``), with
   ``--hook-every-step``.

and, on the keras_estimator side, three more rows from the same Estimator:

5. "fused model_fn step": the Estimator's own ``ModelFnModel.train_step`` (the
   same model_fn, v1 ``AdamOptimizer`` included) run N times inside ONE
   ``tf.function`` ``for _ in tf.range(n)`` loop -- the floor for *this* step,
   so ``ours / fused model_fn step`` isolates the loop's overhead from the cost
   of the v1 step itself (the "fused tf.function" row uses Keras' Adam);
6. "keras_estimator + hook every step": ``train(steps=N, hooks=[LossHook()])``
   with a SessionRunHook fetching the loss (by graph name) on every step,
   compared with the reference's ``train_steps_per_sec_with_hook``; and
   "keras_estimator + observer hook every step", the same hook declaring
   ``observes_only = True`` (what ``keras_estimator.ObserverHook`` declares:
   steps that fetch for it share compiled calls), against the same reference;
   and "keras_estimator + LoggingTensorHook every step", the stock
   ``LoggingTensorHook({"loss": <its name>}, every_n_iter=1)`` (an observer
   of its own), against the reference running the same hook;
7. "Model.fit + HookCallback": the same ``ModelFnModel`` driven by plain Keras
   ``fit(steps_per_epoch=N)`` with the Estimator's default hooks (logging,
   step counter, summaries, checkpoints) in a ``keras_estimator.HookCallback``,
   so it does the work ``Estimator.train`` does. A one-epoch
   ``fit`` on this model runs through the Estimator's loop, so it fuses the
   steps no hook needs, as ``Estimator.train`` does. Its ratio to
   ``Estimator.train`` is also measured in back-to-back pairs (``FIT_PAIRS``
   pairs of N/2 steps, alternating which goes first): the median of the
   pairs' ratios.

Rows 5-7 reach into the Estimator's private model (``est._model``) and loop
context on purpose: the public API has no handle on them yet.

Workload (shared with ``_tf215_reference.make_workload_data``): 4096 x 4 float32
standard-normal features, labels ``argmax(x @ w)`` over 3 classes, MLP
4-64-64-3, batch 32, Adam 1e-3,
``Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(32)``.

Train numbers are N / wall seconds of one timed call after a 200-step warm-up
(for the two Estimators: one ``train(steps=N)`` end to end, checkpoint saves and
graph set-up included; the fused loops: one call after a 10-step warm-up call;
Model.fit + HookCallback: one ``fit`` after a 200-step ``fit``). Predict: one
untimed call, then the mean of K calls of
``next(est.predict(single_example_input_fn))``, each with a fresh generator.

Every timed train also records its CPU time (``time.process_time``, all the
process's threads; the reference reports its own), which other jobs on a
shared machine move far less than wall time: each ratio above is also given
in CPU time (the other side's CPU seconds over ours for the same steps). And
``Estimator.train`` is timed against the fused model_fn step in
``FUSED_PAIRS`` back-to-back pairs of N/2 steps (alternating which goes
first): the median of the pairs' ratios, in CPU and in wall time, is the
loop's overhead measured on the same machine state.

Everything is measured ``--rounds`` times (default 5). Each round runs the
reference and our side one after the other, never both at once, the
reference first in even rounds and last in odd ones, so that a machine
getting faster or slower during the run weighs on both. The table gives each
figure's median over rounds; each ratio is computed within a round, and the
report gives its median and its lowest and highest round::

    python benchmarks/bench_core.py [--train-steps 5000] [--predict-calls 100]
        [--rounds 5] [--skip-reference]

Progress goes to stderr; stdout gets the table, the ratios and, as its last
line, one JSON object with every number (medians, and every round's ratios).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from _ref_venv import ensure_reference_python  # noqa: E402
from _runner import make_log, run_json, time_calls  # noqa: E402
from _tf215_reference import (  # noqa: E402
    BATCH_SIZE,
    HIDDEN_UNITS,
    LEARNING_RATE,
    N_CLASSES,
    WARMUP_STEPS,
    workload_input_fns,
    workload_model_fn,
)

REFERENCE_SCRIPT = _HERE / "_tf215_reference.py"
FUSED_WARMUP_STEPS = 10
# Back-to-back pairs of Estimator.train and Model.fit + HookCallback.
FIT_PAIRS = 6
# Back-to-back pairs of Estimator.train and the fused model_fn step.
FUSED_PAIRS = 6


_log = make_log("bench_core")


# ---- tf.estimator 2.15 (subprocess) -----------------------------------------
def run_reference(train_steps: int, predict_calls: int) -> dict[str, Any]:
    """Runs ``_tf215_reference.py`` under the reference interpreter; returns its JSON."""
    python = ensure_reference_python()
    cmd = [
        python,
        str(REFERENCE_SCRIPT),
        "--train-steps",
        str(train_steps),
        "--predict-calls",
        str(predict_calls),
        "--hook-every-step",
    ]
    started = time.perf_counter()
    result = run_json(cmd, "the tf.estimator 2.15 reference", _log)
    result["subprocess_wall_s"] = time.perf_counter() - started
    return result


# ---- our side -----------------------------------------------------------------
class _StepRateCapture(logging.Handler):
    """Collects the ``global_step/sec: X`` values keras_estimator logs at INFO."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.values: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("global_step/sec: "):
            self.values.append(float(message.split(": ", 1)[1]))


@contextlib.contextmanager
def _capture_step_rates() -> Iterator[_StepRateCapture]:
    """Collects the ``global_step/sec`` lines keras_estimator logs inside the block."""
    ke_logger = logging.getLogger("keras_estimator")
    capture = _StepRateCapture()
    old_level, old_propagate = ke_logger.level, ke_logger.propagate
    ke_logger.addHandler(capture)
    ke_logger.setLevel(logging.INFO)
    ke_logger.propagate = False
    try:
        yield capture
    finally:
        ke_logger.removeHandler(capture)
        ke_logger.setLevel(old_level)
        ke_logger.propagate = old_propagate


def _steady(capture: _StepRateCapture) -> float | None:
    return statistics.median(capture.values) if capture.values else None


def bench_keras_estimator(train_steps: int, predict_calls: int) -> dict[str, Any]:
    """keras_estimator.Estimator with a TF1 model_fn, default RunConfig.

    Returns ``{"keras_estimator": ..., "keras_estimator_hook_every_step": ...,
    "fit_hook_callback": ..., "fused_model_fn_step": ...}``: the last three run
    on the same Estimator (and model) after the first one's measurements.
    """
    import tensorflow as tf

    import keras_estimator

    model_fn = workload_model_fn(tf, keras_estimator, keras_estimator.compat.layers.dense)
    train_input_fn, _, single_example_input_fn = workload_input_fns(tf)
    result: dict[str, Any] = {}

    with tempfile.TemporaryDirectory(prefix="ke_bench_") as model_dir:
        est = keras_estimator.Estimator(
            model_fn, model_dir=model_dir, config=keras_estimator.RunConfig()
        )
        t0 = time.perf_counter()
        est.train(train_input_fn, steps=WARMUP_STEPS)
        result["warmup_train_s"] = time.perf_counter() - t0
        _log(
            f"keras_estimator warm-up train({WARMUP_STEPS}): {result['warmup_train_s']:.2f}s"
        )

        step_before = int(est.get_variable_value("global_step"))
        with _capture_step_rates() as capture:
            t0, c0 = time.perf_counter(), time.process_time()
            est.train(train_input_fn, steps=train_steps)
            elapsed = time.perf_counter() - t0
            result["train_cpu_s"] = time.process_time() - c0
        step_after = int(est.get_variable_value("global_step"))
        if step_after - step_before != train_steps:
            raise RuntimeError(
                f"keras_estimator timed train ran {step_after - step_before} steps, "
                f"expected {train_steps}"
            )
        result["train_s"] = elapsed
        result["train_steps_per_sec"] = train_steps / elapsed
        result["train_steps_per_sec_steady"] = _steady(capture)
        result["steady_samples"] = len(capture.values)
        result["n_checkpoints"] = len(
            [p for p in os.listdir(model_dir) if p.endswith(".index")]
        )
        _log(
            f"keras_estimator train({train_steps}): {elapsed:.2f}s "
            f"({result['train_steps_per_sec']:.0f} steps/s)"
        )

        t0 = time.perf_counter()
        first = next(est.predict(single_example_input_fn))
        result["predict_first_call_ms"] = (time.perf_counter() - t0) * 1e3
        if tuple(first["logits"].shape) != (N_CLASSES,):
            raise RuntimeError(f"unexpected prediction {first}")
        times_ms = time_calls(lambda: next(est.predict(single_example_input_fn)), predict_calls)
        result["predict_call_ms"] = statistics.fmean(times_ms)
        result["predict_call_ms_median"] = statistics.median(times_ms)
        _log(f"keras_estimator predict: {result['predict_call_ms']:.2f} ms/call")

        return {
            "keras_estimator": result,
            "keras_estimator_hook_every_step": _bench_hook_every_step(
                keras_estimator, est, train_input_fn, train_steps
            ),
            "keras_estimator_observer_hook_every_step": _bench_hook_every_step(
                keras_estimator, est, train_input_fn, train_steps, observer=True
            ),
            "keras_estimator_logging_hook_every_step": _bench_logging_hook_every_step(
                keras_estimator, est, train_input_fn, train_steps
            ),
            "fit_hook_callback": _bench_fit_hook_callback(
                keras_estimator, est, train_input_fn, train_steps
            ),
            "fused_model_fn_step": _bench_fused_model_fn_step(
                tf, est, train_input_fn, train_steps
            ),
        }


def _train_loss_name(est: Any) -> str:
    # Private: the graph name of the TRAIN loss, recorded when the Estimator's
    # model traced the model_fn (what the default LoggingTensorHook fetches).
    return est._model.loss_names["train"]


def _global_step_now(est: Any) -> int:
    # Private: the live global_step variable (get_variable_value reads the
    # latest checkpoint, which the two rows outside Estimator.train never write).
    return int(est._store.global_step().numpy())


def _timed_train(
    est: Any, train_input_fn: Any, train_steps: int, hook: Any, what: str
) -> tuple[float, float]:
    """Wall and CPU seconds of ``est.train(steps=N, hooks=[hook])``; checks N steps ran."""
    step_before = int(est.get_variable_value("global_step"))
    t0, c0 = time.perf_counter(), time.process_time()
    est.train(train_input_fn, steps=train_steps, hooks=[hook])
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0
    ran = int(est.get_variable_value("global_step")) - step_before
    if ran != train_steps:
        raise RuntimeError(f"{what} train ran {ran} steps, expected {train_steps}")
    return elapsed, cpu


def _bench_hook_every_step(
    keras_estimator: Any,
    est: Any,
    train_input_fn: Any,
    train_steps: int,
    observer: bool = False,
) -> dict[str, Any]:
    """``est.train(steps=N)`` with a hook that fetches the loss on every step.

    With ``observer``, the same hook declares that it only observes
    (``observes_only = True``, as ``keras_estimator.ObserverHook`` does), so
    steps that fetch for it share compiled calls.
    """
    loss_name = _train_loss_name(est)

    class LossHook(keras_estimator.SessionRunHook):
        """Fetches the training loss by graph name on every step."""

        observes_only = observer

        def __init__(self) -> None:
            self.losses: list[Any] = []

        def before_run(self, run_context):
            return keras_estimator.SessionRunArgs(loss_name)

        def after_run(self, run_context, run_values):
            self.losses.append(run_values.results)

    hook = LossHook()
    with _capture_step_rates() as capture:
        elapsed, cpu = _timed_train(est, train_input_fn, train_steps, hook, "hooked")
    if len(hook.losses) != train_steps:
        raise RuntimeError(
            f"LossHook saw {len(hook.losses)} values, expected {train_steps}"
        )
    result = {
        "observer": observer,
        "loss_name": loss_name,
        "hook_values_seen": len(hook.losses),
        "hook_last_loss": float(hook.losses[-1]),
        "train_s": elapsed,
        "train_cpu_s": cpu,
        "train_steps_per_sec": train_steps / elapsed,
        "train_steps_per_sec_steady": _steady(capture),
        "steady_samples": len(capture.values),
    }
    _log(
        f"keras_estimator train({train_steps}) + per-step loss hook: {elapsed:.2f}s "
        f"({result['train_steps_per_sec']:.0f} steps/s)"
    )
    return result


def _bench_logging_hook_every_step(
    keras_estimator: Any, est: Any, train_input_fn: Any, train_steps: int
) -> dict[str, Any]:
    """``est.train(steps=N)`` with the stock ``LoggingTensorHook`` on the loss, every step.

    Its lines are INFO logs, which the default verbosity drops on both sides.
    """
    loss_name = _train_loss_name(est)
    hook = keras_estimator.LoggingTensorHook({"loss": loss_name}, every_n_iter=1)
    elapsed, cpu = _timed_train(est, train_input_fn, train_steps, hook, "logging-hook")
    _log(
        f"keras_estimator train({train_steps}) + LoggingTensorHook(every_n_iter=1): "
        f"{elapsed:.2f}s ({train_steps / elapsed:.0f} steps/s)"
    )
    return {
        "train_s": elapsed,
        "train_cpu_s": cpu,
        "train_steps_per_sec": train_steps / elapsed,
    }


def _bench_fit_hook_callback(
    keras_estimator: Any, est: Any, train_input_fn: Any, train_steps: int
) -> dict[str, Any]:
    """The Estimator's ModelFnModel under plain ``Model.fit`` + HookCallback."""
    from keras_estimator._src.engine import loop_context as _loop_context

    # Private: the Estimator's model. A one-epoch fit of it runs through the
    # Estimator's loop, fusing the steps no hook needs.
    model = est._model
    spe = int(model.steps_per_execution)

    def fit(steps: int) -> Any:
        # Private: the very hooks Estimator.train adds by default (logging,
        # step counter, summaries, checkpoints), so both do the same work.
        savers, counters = est._default_hooks(model, [])
        hooks = savers + counters
        # Private: hooks find the global step through the loop context that
        # Estimator.train publishes; a bare fit has none, so publish the
        # Estimator's.
        with _loop_context.active(est._loop_context()):
            return model.fit(
                train_input_fn(),
                steps_per_epoch=steps,
                epochs=1,
                verbose=0,
                shuffle=False,
                callbacks=[keras_estimator.HookCallback(hooks)],
            )

    result: dict[str, Any] = {"steps_per_execution": spe}
    t0 = time.perf_counter()
    fit(WARMUP_STEPS)
    result["warmup_train_s"] = time.perf_counter() - t0
    step_before = _global_step_now(est)
    with _capture_step_rates() as capture:
        t0 = time.perf_counter()
        history = fit(train_steps)
        elapsed = time.perf_counter() - t0
    ran = _global_step_now(est) - step_before
    if ran != train_steps:
        raise RuntimeError(f"Model.fit ran {ran} steps, expected {train_steps}")
    result["train_s"] = elapsed
    result["train_steps_per_sec"] = train_steps / elapsed
    result["train_steps_per_sec_steady"] = _steady(capture)
    result["steady_samples"] = len(capture.values)
    result["final_loss"] = float(history.history["loss"][-1])
    _log(
        f"Model.fit({train_steps}) + HookCallback, spe={spe}: {elapsed:.2f}s "
        f"({result['train_steps_per_sec']:.0f} steps/s)"
    )
    # Paired: Estimator.train and Model.fit back to back, in alternating
    # order, so that both see the same machine; the ratio of each pair.
    pair_steps = max(train_steps // 2, 1)
    ratios = []
    for index in range(FIT_PAIRS):
        rates = {}
        for name in ("train", "fit") if index % 2 == 0 else ("fit", "train"):
            t0 = time.perf_counter()
            if name == "train":
                est.train(train_input_fn, steps=pair_steps)
            else:
                fit(pair_steps)
            rates[name] = pair_steps / (time.perf_counter() - t0)
        ratios.append(rates["fit"] / rates["train"])
    result["paired_fit_over_train"] = ratios
    result["paired_fit_over_train_median"] = statistics.median(ratios)
    _log(
        f"Model.fit + HookCallback / Estimator.train, {FIT_PAIRS} pairs of "
        f"{pair_steps} steps: median {result['paired_fit_over_train_median']:.2f}"
    )
    return result


def _bench_fused_model_fn_step(
    tf: Any, est: Any, train_input_fn: Any, train_steps: int
) -> dict[str, Any]:
    """The Estimator's own train_step, N times in one tf.function loop."""
    # Private on purpose: the public API has no handle on the model the
    # Estimator runs. Its train_step calls the same model_fn (v1 AdamOptimizer,
    # global step increment) that est.train fuses.
    model = est._model
    iterator = iter(train_input_fn())

    @tf.function
    def loop(n):
        loss = tf.constant(0.0)
        for _ in tf.range(n):
            loss = model.train_step(next(iterator))["loss"]
        return loss

    result: dict[str, Any] = {}
    t0 = time.perf_counter()
    loop(tf.constant(FUSED_WARMUP_STEPS)).numpy()
    result["warmup_train_s"] = time.perf_counter() - t0
    step_before = _global_step_now(est)
    t0, c0 = time.perf_counter(), time.process_time()
    final_loss = float(loop(tf.constant(train_steps)).numpy())
    elapsed = time.perf_counter() - t0
    result["train_cpu_s"] = time.process_time() - c0
    ran = _global_step_now(est) - step_before
    if ran != train_steps:
        raise RuntimeError(
            f"fused model_fn loop ran {ran} steps, expected {train_steps}"
        )
    result["train_s"] = elapsed
    result["train_steps_per_sec"] = train_steps / elapsed
    result["final_loss"] = final_loss
    _log(
        f"fused model_fn step tf.function({train_steps}): {elapsed:.2f}s "
        f"({result['train_steps_per_sec']:.0f} steps/s)"
    )
    # Paired: Estimator.train (default hooks, end to end) and this loop back
    # to back, in alternating order, so that both see the same machine; per
    # pair, the loop's time over train's (train's speed as a fraction of
    # the loop's), in CPU time and in wall time.
    pair_steps = max(train_steps // 2, 1)
    cpu_ratios, wall_ratios = [], []
    for index in range(FUSED_PAIRS):
        cpu, wall = {}, {}
        for name in ("train", "loop") if index % 2 == 0 else ("loop", "train"):
            t0, c0 = time.perf_counter(), time.process_time()
            if name == "train":
                est.train(train_input_fn, steps=pair_steps)
            else:
                loop(tf.constant(pair_steps)).numpy()
            cpu[name] = time.process_time() - c0
            wall[name] = time.perf_counter() - t0
        cpu_ratios.append(cpu["loop"] / cpu["train"])
        wall_ratios.append(wall["loop"] / wall["train"])
    result["paired_train_vs_loop_cpu"] = cpu_ratios
    result["paired_train_vs_loop_wall"] = wall_ratios
    result["paired_train_vs_loop_cpu_median"] = statistics.median(cpu_ratios)
    result["paired_train_vs_loop_wall_median"] = statistics.median(wall_ratios)
    _log(
        f"Estimator.train / fused model_fn step, {FUSED_PAIRS} pairs of {pair_steps} "
        f"steps: median CPU {result['paired_train_vs_loop_cpu_median']:.2f}, "
        f"wall {result['paired_train_vs_loop_wall_median']:.2f}"
    )
    return result


def _keras_model(keras: Any) -> Any:
    """The 4-64-64-3 MLP as a keras.Sequential, wrapped to take ``{"x": ...}``.

    Sequential models cannot take dict inputs, so the Sequential MLP is called
    on the ``x`` entry of a one-input functional model: same layers and
    weights, and the dataset stays identical to the Estimators'.
    """
    mlp = keras.Sequential(
        [
            keras.layers.Dense(HIDDEN_UNITS[0], activation="relu"),
            keras.layers.Dense(HIDDEN_UNITS[1], activation="relu"),
            keras.layers.Dense(N_CLASSES),
        ]
    )
    inputs = {"x": keras.Input(shape=(4,), name="x")}
    return keras.Model(inputs, mlp(inputs["x"]))


def bench_keras_fit(train_steps: int) -> dict[str, Any]:
    """Plain Keras 3 fit, steps_per_execution=1."""
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    train_input_fn, _, _ = workload_input_fns(tf)
    dataset = train_input_fn()
    model = _keras_model(keras)
    model.compile(
        optimizer=keras.optimizers.Adam(LEARNING_RATE),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    result: dict[str, Any] = {}
    t0 = time.perf_counter()
    model.fit(dataset, steps_per_epoch=WARMUP_STEPS, epochs=1, verbose=0, shuffle=False)
    result["warmup_train_s"] = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    history = model.fit(
        dataset, steps_per_epoch=train_steps, epochs=1, verbose=0, shuffle=False
    )
    elapsed = time.perf_counter() - t0
    result["train_cpu_s"] = time.process_time() - c0
    result["train_s"] = elapsed
    result["train_steps_per_sec"] = train_steps / elapsed
    result["final_loss"] = float(history.history["loss"][-1])
    _log(
        f"keras fit({train_steps}): {elapsed:.2f}s "
        f"({result['train_steps_per_sec']:.0f} steps/s)"
    )
    return result


def bench_fused(train_steps: int) -> dict[str, Any]:
    """All N steps in one tf.function: GradientTape + optimizer.apply in tf.range."""
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    train_input_fn, _, _ = workload_input_fns(tf)
    model = _keras_model(keras)
    optimizer = keras.optimizers.Adam(LEARNING_RATE)
    optimizer.build(model.trainable_variables)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    iterator = iter(train_input_fn())

    @tf.function
    def train_n(n):
        loss = tf.constant(0.0)
        for _ in tf.range(n):
            features, labels = next(iterator)
            with tf.GradientTape() as tape:
                logits = model(features, training=True)
                loss = loss_fn(labels, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply(grads, model.trainable_variables)
        return loss

    result: dict[str, Any] = {}
    t0 = time.perf_counter()
    train_n(tf.constant(FUSED_WARMUP_STEPS)).numpy()
    result["warmup_train_s"] = time.perf_counter() - t0
    iterations_before = int(optimizer.iterations.numpy())
    t0, c0 = time.perf_counter(), time.process_time()
    final_loss = float(train_n(tf.constant(train_steps)).numpy())
    elapsed = time.perf_counter() - t0
    result["train_cpu_s"] = time.process_time() - c0
    ran = int(optimizer.iterations.numpy()) - iterations_before
    if ran != train_steps:
        raise RuntimeError(f"fused loop ran {ran} steps, expected {train_steps}")
    result["train_s"] = elapsed
    result["train_steps_per_sec"] = train_steps / elapsed
    result["final_loss"] = final_loss
    _log(
        f"fused tf.function({train_steps}): {elapsed:.2f}s "
        f"({result['train_steps_per_sec']:.0f} steps/s)"
    )
    return result


# ---- report -------------------------------------------------------------------
def _fmt(value: Any, spec: str) -> str:
    if value is None:
        width = spec.split(".")[0]
        return format("-", f">{width}") if width else "-"
    return format(value, spec)


def _ratio(a: Any, b: Any) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def _ratios(results: dict[str, Any]) -> dict[str, float | None]:
    """The ratios the report prints, from one round's (or the median) figures."""
    ours = results["keras_estimator"]
    fit = results["keras_fit"]
    fused = results["fused_limit"]
    fused_mf = results["fused_model_fn_step"]
    hooked = results["keras_estimator_hook_every_step"]
    observed = results["keras_estimator_observer_hook_every_step"]
    logged = results["keras_estimator_logging_hook_every_step"]
    fit_hooks = results["fit_hook_callback"]
    ref = results.get("tf_estimator_2_15") or {}
    return {
        "ours_vs_ref_train": _ratio(
            ours["train_steps_per_sec"], ref.get("train_steps_per_sec")
        ),
        "ours_vs_ref_steady_train": _ratio(
            ours["train_steps_per_sec"], ref.get("train_steps_per_sec_steady")
        ),
        "ours_steady_vs_ref_steady_train": _ratio(
            ours["train_steps_per_sec_steady"], ref.get("train_steps_per_sec_steady")
        ),
        "ours_vs_keras_fit_train": _ratio(
            ours["train_steps_per_sec"], fit["train_steps_per_sec"]
        ),
        "ours_vs_fused_limit_train": _ratio(
            ours["train_steps_per_sec"], fused["train_steps_per_sec"]
        ),
        "ours_vs_fused_model_fn_step_train": _ratio(
            ours["train_steps_per_sec"], fused_mf["train_steps_per_sec"]
        ),
        "fused_model_fn_step_vs_fused_limit_train": _ratio(
            fused_mf["train_steps_per_sec"], fused["train_steps_per_sec"]
        ),
        "ours_hook_vs_ref_hook_train": _ratio(
            hooked["train_steps_per_sec"], ref.get("train_steps_per_sec_with_hook")
        ),
        "ours_observer_hook_vs_ref_hook_train": _ratio(
            observed["train_steps_per_sec"], ref.get("train_steps_per_sec_with_hook")
        ),
        "ours_logging_hook_vs_ref_logging_hook_train": _ratio(
            logged["train_steps_per_sec"], ref.get("train_steps_per_sec_with_logging_hook")
        ),
        "ours_hook_vs_ours_train": _ratio(
            hooked["train_steps_per_sec"], ours["train_steps_per_sec"]
        ),
        "ours_vs_fit_hook_callback_train": _ratio(
            ours["train_steps_per_sec"], fit_hooks["train_steps_per_sec"]
        ),
        "fit_hook_callback_vs_ours_paired": fit_hooks.get("paired_fit_over_train_median"),
        "predict_speedup_vs_ref": _ratio(
            ref.get("predict_call_ms"), ours["predict_call_ms"]
        ),
        # The same comparisons in CPU time (all the process's threads), which
        # other jobs on a shared machine move far less than wall time: the
        # other side's CPU seconds over ours for the same number of steps.
        "ours_vs_ref_train_cpu": _ratio(ref.get("train_cpu_s"), ours.get("train_cpu_s")),
        "ours_vs_fused_limit_train_cpu": _ratio(
            fused.get("train_cpu_s"), ours.get("train_cpu_s")
        ),
        "ours_vs_fused_model_fn_step_train_cpu": _ratio(
            fused_mf.get("train_cpu_s"), ours.get("train_cpu_s")
        ),
        "ours_hook_vs_ref_hook_train_cpu": _ratio(
            ref.get("train_with_hook_cpu_s"), hooked.get("train_cpu_s")
        ),
        "ours_observer_hook_vs_ref_hook_train_cpu": _ratio(
            ref.get("train_with_hook_cpu_s"), observed.get("train_cpu_s")
        ),
        "ours_logging_hook_vs_ref_logging_hook_train_cpu": _ratio(
            ref.get("train_with_logging_hook_cpu_s"), logged.get("train_cpu_s")
        ),
        "ours_vs_fused_model_fn_step_paired_cpu": fused_mf.get(
            "paired_train_vs_loop_cpu_median"
        ),
        "ours_vs_fused_model_fn_step_paired_wall": fused_mf.get(
            "paired_train_vs_loop_wall_median"
        ),
    }


def _print_report(
    results: dict[str, Any], ratios: dict[str, Any], spread: dict[str, Any]
) -> None:
    """Prints the median figures, the median per-round ratios and their range."""
    ours = results["keras_estimator"]
    fit = results["keras_fit"]
    fused = results["fused_limit"]
    fused_mf = results["fused_model_fn_step"]
    hooked = results["keras_estimator_hook_every_step"]
    observed = results["keras_estimator_observer_hook_every_step"]
    logged = results["keras_estimator_logging_hook_every_step"]
    fit_hooks = results["fit_hook_callback"]
    ref = results.get("tf_estimator_2_15")
    ref = ref or {}

    rows = [
        (
            "tf.estimator 2.15",
            ref.get("train_steps_per_sec"),
            ref.get("train_steps_per_sec_steady"),
            ref.get("predict_call_ms"),
            ref.get("predict_first_call_ms"),
        ),
        (
            "keras_estimator",
            ours["train_steps_per_sec"],
            ours["train_steps_per_sec_steady"],
            ours["predict_call_ms"],
            ours["predict_first_call_ms"],
        ),
        ("Keras fit (spe=1)", fit["train_steps_per_sec"], None, None, None),
        ("fused tf.function", fused["train_steps_per_sec"], None, None, None),
        ("fused model_fn step", fused_mf["train_steps_per_sec"], None, None, None),
        (
            "tf.estimator 2.15 + hook every step",
            ref.get("train_steps_per_sec_with_hook"),
            None,
            None,
            None,
        ),
        (
            "keras_estimator + hook every step",
            hooked["train_steps_per_sec"],
            hooked["train_steps_per_sec_steady"],
            None,
            None,
        ),
        (
            "keras_estimator + observer hook every step",
            observed["train_steps_per_sec"],
            observed["train_steps_per_sec_steady"],
            None,
            None,
        ),
        (
            "tf.estimator 2.15 + LoggingTensorHook every step",
            ref.get("train_steps_per_sec_with_logging_hook"),
            None,
            None,
            None,
        ),
        (
            "keras_estimator + LoggingTensorHook every step",
            logged["train_steps_per_sec"],
            None,
            None,
            None,
        ),
        (
            "Model.fit + HookCallback",
            fit_hooks["train_steps_per_sec"],
            fit_hooks["train_steps_per_sec_steady"],
            None,
            None,
        ),
    ]
    width = max(len(row[0]) for row in rows)
    header = (
        f"{'implementation':<{width}} {'train steps/s':>14} {'steady steps/s':>15} "
        f"{'predict ms/call':>16} {'1st predict ms':>15}"
    )
    print()
    print(
        f"Workload: MLP 4-64-64-3, batch {BATCH_SIZE}, Adam {LEARNING_RATE}; "
        f"timed train steps {results['train_steps']}, "
        f"predict calls {results['predict_calls']}"
    )
    print(header)
    print("-" * len(header))
    for name, train, steady, pred, first in rows:
        if name.startswith("tf.estimator 2.15") and not ref:
            print(f"{name:<{width}} {'(skipped)':>14}")
            continue
        print(
            f"{name:<{width}} {_fmt(train, '14.1f')} {_fmt(steady, '15.1f')} "
            f"{_fmt(pred, '16.2f')} {_fmt(first, '15.1f')}"
        )

    labels = {
        "ours_vs_ref_train": "keras_estimator / tf.estimator 2.15 train (end to end)",
        "ours_vs_ref_steady_train": "keras_estimator / tf.estimator 2.15 steady train",
        "ours_steady_vs_ref_steady_train": "keras_estimator steady / tf.estimator 2.15 steady",
        "ours_vs_keras_fit_train": "keras_estimator / Keras fit train",
        "ours_vs_fused_limit_train": "keras_estimator / fused limit train",
        "ours_vs_fused_model_fn_step_train": "keras_estimator / fused model_fn step train",
        "fused_model_fn_step_vs_fused_limit_train": "fused model_fn step / fused limit train",
        "ours_hook_vs_ref_hook_train": "hook every step: keras_estimator / tf.estimator 2.15",
        "ours_observer_hook_vs_ref_hook_train": (
            "observer hook every step: keras_estimator / 2.15"
        ),
        "ours_logging_hook_vs_ref_logging_hook_train": (
            "LoggingTensorHook every step: keras_estimator / 2.15"
        ),
        "ours_hook_vs_ours_train": "keras_estimator + hook / keras_estimator train",
        "ours_vs_fit_hook_callback_train": "keras_estimator / Model.fit + HookCallback train",
        "fit_hook_callback_vs_ours_paired": "Model.fit + HookCallback / Estimator.train, paired",
        "predict_speedup_vs_ref": "predict speedup (ref ms / ours ms)",
        "ours_vs_ref_train_cpu": "CPU time: keras_estimator / tf.estimator 2.15 train",
        "ours_vs_fused_limit_train_cpu": "CPU time: keras_estimator / fused limit train",
        "ours_vs_fused_model_fn_step_train_cpu": (
            "CPU time: keras_estimator / fused model_fn step"
        ),
        "ours_hook_vs_ref_hook_train_cpu": "CPU time: hook every step, ours / 2.15",
        "ours_observer_hook_vs_ref_hook_train_cpu": (
            "CPU time: observer hook every step, ours / 2.15"
        ),
        "ours_logging_hook_vs_ref_logging_hook_train_cpu": (
            "CPU time: LoggingTensorHook every step, ours / 2.15"
        ),
        "ours_vs_fused_model_fn_step_paired_cpu": (
            "paired: Estimator.train / fused model_fn step, CPU"
        ),
        "ours_vs_fused_model_fn_step_paired_wall": (
            "paired: Estimator.train / fused model_fn step, wall"
        ),
    }
    print()
    print(f"Ratios: median over {results['rounds']} rounds (lowest - highest round)")
    for key, label in labels.items():
        low, high = spread.get(key, (None, None))
        print(
            f"{label:<54} {_fmt(ratios[key], '8.2f')}x   "
            f"({_fmt(low, '.2f')} - {_fmt(high, '.2f')})"
        )
    print()


def _median_tree(rounds: list[Any]) -> Any:
    """The per-round results merged: numbers become their median over rounds."""
    first = rounds[0]
    if isinstance(first, dict):
        return {
            key: _median_tree([r[key] for r in rounds if isinstance(r, dict) and key in r])
            for key in first
        }
    if isinstance(first, (int, float)) and not isinstance(first, bool):
        numbers = [r for r in rounds if isinstance(r, (int, float))]
        return statistics.median(numbers)
    return first


def _run_round(
    index: int, train_steps: int, predict_calls: int, skip_reference: bool
) -> dict[str, Any]:
    """One round: the reference and our side, in alternating order by round."""
    result: dict[str, Any] = {}

    def ours() -> None:
        result.update(bench_keras_estimator(train_steps, predict_calls))
        result["keras_fit"] = bench_keras_fit(train_steps)
        result["fused_limit"] = bench_fused(train_steps)

    def reference() -> None:
        result["tf_estimator_2_15"] = (
            None if skip_reference else run_reference(train_steps, predict_calls)
        )

    for part in (reference, ours) if index % 2 == 0 else (ours, reference):
        part()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-steps", type=int, default=5000)
    parser.add_argument("--predict-calls", type=int, default=100)
    parser.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="measure everything this many times, alternating which side goes first",
    )
    parser.add_argument(
        "--skip-reference",
        action="store_true",
        help="do not run tf.estimator 2.15 (no reference venv needed)",
    )
    args = parser.parse_args(argv)
    if args.train_steps <= 0 or args.predict_calls <= 0 or args.rounds <= 0:
        parser.error("--train-steps, --predict-calls and --rounds must be positive")

    if not args.skip_reference:
        ensure_reference_python()  # create the reference venv before timing

    import keras
    import tensorflow as tf

    import keras_estimator

    tf.get_logger().setLevel("ERROR")
    rounds = []
    for index in range(args.rounds):
        _log(f"round {index + 1} of {args.rounds}")
        rounds.append(
            _run_round(index, args.train_steps, args.predict_calls, args.skip_reference)
        )
    per_round = [_ratios(r) for r in rounds]
    ratios = _median_tree(per_round)
    spread = {
        key: (
            min(v for r in per_round if (v := r[key]) is not None),
            max(v for r in per_round if (v := r[key]) is not None),
        )
        for key in ratios
        if ratios[key] is not None
    }
    results: dict[str, Any] = {
        **_median_tree(rounds),
        "train_steps": args.train_steps,
        "predict_calls": args.predict_calls,
        "warmup_steps": WARMUP_STEPS,
        "rounds": args.rounds,
        "cpu_count": os.cpu_count(),
        "python_version": platform.python_version(),
        "tensorflow_version": tf.__version__,
        "keras_version": keras.__version__,
        "keras_estimator_version": keras_estimator.__version__,
    }
    _print_report(results, ratios, spread)
    results["ratios"] = ratios
    results["ratios_per_round"] = per_round
    print(json.dumps(results, sort_keys=True))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
