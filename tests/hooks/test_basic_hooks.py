"""The basic SessionRunHooks, driven by a fake loop that may fuse steps.

`run_loop` follows the loop's contract: begin, after_create_session, then
per run before_run / after_run with `run_context.global_step` before and
after the run, then end. A run is one step when any hook fetches values or
when `fused=False`; otherwise its length is the minimum of the hooks'
`steps_until_needed` (1 for a hook without it), optionally capped further
by `caps` (standing for other constraints of a real loop).
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import re
import threading
import time

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

from keras_estimator._src.base.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
    SessionStandIn,
)
from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from keras_estimator._src.engine import loop_context as _loop_context
from keras_estimator._src.hooks import basic_hooks as _basic_hooks
from keras_estimator._src.hooks.basic_hooks import (
    FeedFnHook,
    FinalOpsHook,
    GlobalStepWaiterHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    SecondOrStepTimer,
    StepCounterHook,
    StopAtStepHook,
)
from keras_estimator._src.hooks.checkpoint_hooks import (
    CheckpointSaverHook,
    CheckpointSaverListener,
)

MAX_FUSED = 1000
LOGGER = "keras_estimator"


class FakeModel:
    """Variables of a model: a global step and a weight that counts steps."""

    def __init__(self, start: int = 0) -> None:
        self.step = tf.Variable(start, dtype=tf.int64, name="global_step")
        self.weight = tf.Variable(np.zeros([2], np.float32), name="weight")

    def saveable(self) -> dict[str, tf.Variable]:
        return {"global_step": self.step, "dense/kernel": self.weight}

    def context(self, model_dir: str | None) -> _loop_context.LoopContext:
        return _loop_context.LoopContext(model_dir, self.saveable, self.step)


@dataclasses.dataclass
class LoopRecord:
    runs: list[tuple[int, int]]  # (global step before the run, steps in it)
    final_step: int
    stopped: bool
    model: FakeModel


def plan(hooks, global_step: int) -> int:
    needs = [MAX_FUSED]
    for hook in hooks:
        method = getattr(hook, "steps_until_needed", None)
        if method is None:
            return 1
        need = method(global_step)
        if need is not None:
            needs.append(max(int(need), 1))
    return min(needs)


def run_loop(
    hooks,
    num_steps: int,
    *,
    fused: bool = True,
    start: int = 0,
    model_dir: str | None = None,
    values=None,
    caps=None,
    advance: bool = True,
    loss=None,
    model: FakeModel | None = None,
) -> LoopRecord:
    """Runs `num_steps` steps (fewer if a hook stops the loop).

    Args:
        values: graph name -> function of the global step after the step,
            giving the value a fetch of that name returns.
        caps: run lengths the "rest of the loop" allows, cycled.
        advance: False makes the global step stand still (evaluation).
        loss: function of the global step giving the loss the loop passes to
            loop-driven NanTensorHooks after each run.
    """
    model = model or FakeModel(start)
    start = int(model.step.numpy())
    values = values or {}
    cap_iter = itertools.cycle(caps) if caps else itertools.repeat(MAX_FUSED)
    session = SessionStandIn()
    runs: list[tuple[int, int]] = []
    stopped = False

    def resolve(fetch, step):
        if isinstance(fetch, str):
            return np.asarray(values[fetch](step))
        if isinstance(fetch, tf.Variable):
            return fetch.numpy()
        raise TypeError(fetch)

    with _loop_context.active(model.context(model_dir)):
        for hook in hooks:
            hook.begin()
        for hook in hooks:
            hook.after_create_session(session, None)
        step, done = start, 0
        while done < num_steps:
            context = SessionRunContext(SessionRunArgs(None), None)
            context.global_step = step
            requests = [hook.before_run(context) for hook in hooks]
            fetching = any(r is not None and r.fetches is not None for r in requests)
            length = 1 if fetching or not fused else plan(hooks, step)
            length = min(length, next(cap_iter), num_steps - done)
            done += length
            if advance:
                model.step.assign_add(length)
                model.weight.assign_add(np.full([2], length, np.float32))
            runs.append((step, length))
            step = int(model.step.numpy())
            context.global_step = step
            if loss is not None:
                for hook in hooks:
                    if getattr(hook, "checks_fused_loss", False) and hook.loop_driven:
                        hook.check_loss(loss(step), step)
            for hook, request in zip(hooks, requests, strict=True):
                results = None
                if request is not None and request.fetches is not None:
                    results = tf.nest.map_structure(
                        lambda f, s=step: resolve(f, s), request.fetches
                    )
                hook.after_run(context, SessionRunValues(results, None, None))
            if context.stop_requested:
                stopped = True
                break
        for hook in hooks:
            hook.end(session)
    return LoopRecord(runs, int(model.step.numpy()), stopped, model)


def info_messages(caplog) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "tensorflow" and r.levelno == logging.INFO
    ]


@pytest.fixture
def step_clock(monkeypatch):
    """The hooks' clock reads 0.1 s per global step of the running loop."""

    def clock():
        context = _loop_context.current()
        return 0.0 if context is None else context.global_step() * 0.1

    monkeypatch.setattr(_basic_hooks, "_clock", clock)


# ---- SecondOrStepTimer -------------------------------------------------------


def test_timer_every_steps():
    timer = SecondOrStepTimer(every_steps=3)
    assert timer.last_triggered_step() is None
    assert timer.should_trigger_for_step(5)
    assert timer.steps_until_trigger(5) == 1
    assert timer.update_last_triggered_step(5) == (None, None)
    assert timer.last_triggered_step() == 5
    assert not timer.should_trigger_for_step(5)
    assert not timer.should_trigger_for_step(7)
    assert timer.should_trigger_for_step(8)
    assert timer.steps_until_trigger(5) == 3
    assert timer.steps_until_trigger(6) == 2
    elapsed_secs, elapsed_steps = timer.update_last_triggered_step(9)
    assert elapsed_steps == 4 and elapsed_secs >= 0
    timer.reset()
    assert timer.last_triggered_step() is None
    assert timer.should_trigger_for_step(9)


def test_timer_every_secs(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(_basic_hooks, "_clock", lambda: now[0])
    timer = SecondOrStepTimer(every_secs=10)
    assert timer.should_trigger_for_step(1)
    timer.update_last_triggered_step(1)
    now[0] = 105.0
    assert not timer.should_trigger_for_step(50)
    now[0] = 110.0
    assert timer.should_trigger_for_step(50)
    assert timer.update_last_triggered_step(50) == (10.0, 49)
    assert timer.steps_until_trigger(50) is None


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, r"Either every_secs or every_steps should be provided \(got every_secs=None, every_steps=None\)"),
        ({"every_secs": 1, "every_steps": 2}, r"Can not provide both every_secs and every_steps \(got every_secs=1, every_steps=2\)"),
    ],
)
def test_timer_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SecondOrStepTimer(**kwargs)


# ---- LoggingTensorHook -------------------------------------------------------


def test_logging_every_n_iter(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    hook = LoggingTensorHook({"loss": "loss", "acc": "acc:0"}, every_n_iter=3)
    values = {"loss": lambda s: s * 1.0, "acc:0": lambda s: s / 10}
    record = run_loop([hook], 10, values=values)
    lines = info_messages(caplog)
    assert lines[0] == "acc = 0.1, loss = 1.0"  # first line: no elapsed time
    assert [re.sub(r" \(\d+\.\d{3} sec\)$", "", line) for line in lines] == [
        "acc = 0.1, loss = 1.0",
        "acc = 0.4, loss = 4.0",
        "acc = 0.7, loss = 7.0",
        "acc = 1.0, loss = 10.0",
    ]
    assert all(re.search(r" \(\d+\.\d{3} sec\)$", line) for line in lines[1:])
    # Logged steps ran alone; the others were fused.
    assert record.runs == [(0, 1), (1, 2), (3, 1), (4, 2), (6, 1), (7, 2), (9, 1)]


def test_logging_counts_from_the_start_step(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    hook = LoggingTensorHook(["step"], every_n_iter=5)
    run_loop([hook], 12, start=40, values={"step": lambda s: s})
    assert info_messages(caplog)[0] == "step = 41"
    assert [m.split(" (")[0] for m in info_messages(caplog)] == [
        "step = 41", "step = 46", "step = 51"
    ]


def test_logging_list_order_and_formatter(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    values = {"b": lambda s: 2, "a": lambda s: 1}
    run_loop([LoggingTensorHook(["b", "a"], every_n_iter=100)], 3, values=values)
    assert info_messages(caplog) == ["b = 2, a = 1"]
    caplog.clear()
    hook = LoggingTensorHook(
        {"x": "a"}, every_n_iter=2, formatter=lambda v: f"x is {int(v['x'])}"
    )
    run_loop([hook], 3, values=values)
    assert info_messages(caplog) == ["x is 1", "x is 1"]


def test_logging_at_end_logs_last_step(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    hook = LoggingTensorHook({"s": "step"}, at_end=True)
    assert hook.steps_until_needed(0) == 1
    record = run_loop([hook], 6, values={"step": lambda s: s})
    assert info_messages(caplog) == ["s = 6"]
    assert all(length == 1 for _, length in record.runs)


def test_logging_every_n_secs(caplog, step_clock):
    caplog.set_level(logging.INFO, logger=LOGGER)
    hook = LoggingTensorHook({"s": "step"}, every_n_secs=0.25)
    assert hook.steps_until_needed(0) == 1
    run_loop([hook], 10, values={"step": lambda s: s})
    # The clock moves 0.1 s per step. As in tf.estimator the decision is
    # taken before the step: before step 5 (clock 0.4) 0.3 s have passed
    # since the line logged after step 1 (clock 0.1).
    assert info_messages(caplog) == ["s = 1", "s = 5 (0.400 sec)", "s = 9 (0.400 sec)"]


def test_logging_counts_runs_when_the_step_stands_still(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    hook = LoggingTensorHook({"s": "step"}, every_n_iter=2)
    record = run_loop([hook], 5, start=7, advance=False, values={"step": lambda s: s})
    assert len(info_messages(caplog)) == 3  # runs 1, 3 and 5
    assert all(length == 1 for _, length in record.runs)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, r"either at_end and/or exactly one of every_n_iter and every_n_secs must be provided"),
        ({"every_n_iter": 1, "every_n_secs": 1}, r"exactly one of every_n_iter and every_n_secs"),
        ({"every_n_iter": 0}, r"invalid every_n_iter=0\."),
        ({"every_n_iter": -2, "at_end": True}, r"invalid every_n_iter=-2\."),
    ],
)
def test_logging_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LoggingTensorHook({"a": "a"}, **kwargs)


# ---- StopAtStepHook ------------------------------------------------------------


def test_stop_at_num_steps_counts_from_start():
    hook = StopAtStepHook(num_steps=5)
    record = run_loop([hook], 100, start=3)
    assert record.stopped and record.final_step == 8
    assert record.runs == [(3, 5)]  # fused, never past the last step
    assert hook.last_step == 8


def test_stop_at_last_step_with_single_steps():
    record = run_loop([StopAtStepHook(last_step=7)], 100, fused=False)
    assert record.stopped and record.final_step == 7 and len(record.runs) == 7


def test_stop_at_passed_last_step_runs_one_step():
    # As tf.estimator: the check is in after_run, so one step runs.
    record = run_loop([StopAtStepHook(last_step=5)], 100, start=10)
    assert record.stopped and record.final_step == 11


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, r"One of num_steps or last_step must be specified\."),
        ({"num_steps": 1, "last_step": 2}, r"Only one of num_steps or last_step can be specified"),
    ],
)
def test_stop_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        StopAtStepHook(**kwargs)


# ---- CheckpointSaverHook -------------------------------------------------------


class RecordingListener(CheckpointSaverListener):
    def __init__(self, stop_at: int | None = None) -> None:
        self.calls: list[tuple] = []
        self.stop_at = stop_at

    def begin(self):
        self.calls.append(("begin",))

    def before_save(self, session, global_step_value):
        self.calls.append(("before_save", global_step_value))

    def after_save(self, session, global_step_value):
        self.calls.append(("after_save", global_step_value))
        return self.stop_at is not None and global_step_value >= self.stop_at

    def end(self, session, global_step_value):
        self.calls.append(("end", global_step_value))


def checkpoint_steps(model_dir) -> list[int]:
    state = tf.train.get_checkpoint_state(str(model_dir))
    return [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]


def test_checkpoint_saver_steps_and_files(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    listener = RecordingListener()
    hook = CheckpointSaverHook(str(tmp_path), save_steps=4, listeners=[listener])
    record = run_loop([hook], 10, model_dir=str(tmp_path))
    assert checkpoint_steps(tmp_path) == [0, 4, 8, 10]
    assert record.runs == [(0, 4), (4, 4), (8, 2)]
    assert sorted(p.name for p in tmp_path.glob("*.index")) == [
        f"model.ckpt-{s}.index" for s in (0, 10, 4, 8)
    ]
    prefix = str(tmp_path / "model.ckpt-8")
    assert _checkpoint.step_of(prefix) == 8
    np.testing.assert_array_equal(_checkpoint.variable_value(prefix, "dense/kernel"), [8, 8])
    assert listener.calls == [
        ("begin",),
        ("before_save", 0), ("after_save", 0),
        ("before_save", 4), ("after_save", 4),
        ("before_save", 8), ("after_save", 8),
        ("before_save", 10), ("after_save", 10),
        ("end", 10),
    ]
    messages = info_messages(caplog)
    assert "Calling checkpoint listeners before saving checkpoint 4..." in messages
    assert "Calling checkpoint listeners after saving checkpoint 4..." in messages


def test_checkpoint_saver_no_duplicate_at_end(tmp_path):
    listener = RecordingListener()
    hook = CheckpointSaverHook(str(tmp_path), save_steps=5, listeners=[listener])
    run_loop([hook], 10, start=20, model_dir=str(tmp_path))
    assert checkpoint_steps(tmp_path) == [20, 25, 30]
    assert listener.calls[-1] == ("end", 30)
    assert [c for c in listener.calls if c[0] == "before_save"] == [
        ("before_save", 20), ("before_save", 25), ("before_save", 30)
    ]


def test_listener_after_save_stops(tmp_path):
    listener = RecordingListener(stop_at=6)
    hook = CheckpointSaverHook(str(tmp_path), save_steps=3, listeners=[listener])
    record = run_loop([hook], 100, model_dir=str(tmp_path))
    assert record.stopped and record.final_step == 6
    assert checkpoint_steps(tmp_path) == [0, 3, 6]
    assert listener.calls[-1] == ("end", 6)


def test_checkpoint_retention_attributes(tmp_path):
    hook = CheckpointSaverHook(str(tmp_path), save_steps=1)
    hook.keep_checkpoint_max = 2
    run_loop([hook], 5, model_dir=str(tmp_path))
    assert checkpoint_steps(tmp_path) == [4, 5]
    assert sorted(p.name for p in tmp_path.glob("*.index")) == [
        "model.ckpt-4.index", "model.ckpt-5.index"
    ]


def test_checkpoint_saver_secs(tmp_path, step_clock):
    hook = CheckpointSaverHook(str(tmp_path), save_secs=1)
    assert hook.steps_until_needed(0) is None
    record = run_loop([hook], 25, model_dir=str(tmp_path), caps=[4])
    # Checked at run boundaries (every 4 steps); due after 1 s = 10 steps.
    assert checkpoint_steps(tmp_path) == [0, 12, 24, 25]
    assert record.final_step == 25


def test_checkpoint_saver_needs_a_loop(tmp_path):
    hook = CheckpointSaverHook(str(tmp_path), save_steps=1)
    with pytest.raises(RuntimeError, match="run it in Estimator.train"):
        hook.begin()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, r"exactly one of save_secs and save_steps \(got save_secs=None, save_steps=None\)"),
        ({"save_secs": 1, "save_steps": 1}, r"exactly one of save_secs and save_steps"),
        ({"save_steps": 1, "saver": object()}, r"saver=\.\.\.\) is not supported: TF1 Savers"),
        ({"save_steps": 1, "scaffold": object()}, r"scaffold=\.\.\.\) is not supported"),
    ],
)
def test_checkpoint_saver_validation(tmp_path, kwargs, message):
    # A saver or scaffold is refused when the loop begins: a TF1
    # session runs TensorFlow's hook with them (test_hooks_in_v1_sessions.py).
    with pytest.raises(ValueError, match=message):
        CheckpointSaverHook(str(tmp_path), **kwargs).begin()


# ---- StepCounterHook ------------------------------------------------------------


def test_step_counter_logs_rate(caplog, step_clock, tmp_path):
    caplog.set_level(logging.INFO, logger=LOGGER)
    hook = StepCounterHook(every_n_steps=5, output_dir=str(tmp_path))
    record = run_loop([hook], 17)
    assert info_messages(caplog) == ["global_step/sec: 10"] * 3
    assert record.runs == [(0, 1), (1, 5), (6, 5), (11, 5), (16, 1)]
    summaries = []
    for path in tmp_path.glob("events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                # A simple value, as tf.estimator's StepCounterHook wrote it.
                assert value.WhichOneof("value") == "simple_value"
                summaries.append((event.step, value.tag, value.simple_value))
    assert summaries == [(s, "global_step/sec", pytest.approx(10.0)) for s in (6, 11, 16)]


def test_step_counter_secs(caplog, step_clock):
    caplog.set_level(logging.INFO, logger=LOGGER)
    hook = StepCounterHook(every_n_steps=None, every_n_secs=1)
    assert hook.steps_until_needed(0) is None
    run_loop([hook], 30, caps=[5])
    assert info_messages(caplog) == ["global_step/sec: 10"] * 2


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"every_n_steps": None}, r"exactly one of every_n_steps and every_n_secs should be provided"),
        ({"every_n_secs": 3}, r"got every_n_steps=100, every_n_secs=3"),
        ({"summary_writer": object()}, r"TF1 FileWriter objects do not exist in TF2\. Pass output_dir"),
    ],
)
def test_step_counter_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        StepCounterHook(**kwargs).begin()


# ---- NanTensorHook --------------------------------------------------------------


def nan_from(step):
    return lambda s: float("nan") if s >= step else 1.0


def test_nan_hook_fetches_and_raises():
    hook = NanTensorHook("loss")
    assert hook.steps_until_needed(0) == 1
    assert hook.before_run(SessionRunContext(SessionRunArgs(None), None)).fetches == "loss"
    with pytest.raises(NanLossDuringTrainingError, match=r"^NaN loss during training\.$"):
        run_loop([hook], 10, values={"loss": nan_from(4)})
    assert str(NanLossDuringTrainingError()) == "NaN loss during training."
    assert issubclass(NanLossDuringTrainingError, RuntimeError)


def test_nan_hook_stops_without_failing(caplog):
    caplog.set_level(logging.WARNING, logger=LOGGER)
    hook = NanTensorHook("loss", fail_on_nan_loss=False)
    record = run_loop([hook], 10, values={"loss": nan_from(4)})
    assert record.stopped and record.final_step == 4
    assert any("Model diverged with loss = NaN" in r.getMessage() for r in caplog.records)


def test_nan_hook_driven_by_the_loop():
    hook = NanTensorHook.for_loop("loss")
    assert hook.checks_fused_loss and hook.loop_driven
    assert hook.steps_until_needed(0) is None
    assert hook.before_run(SessionRunContext(SessionRunArgs(None), None)) is None
    with pytest.raises(NanLossDuringTrainingError):
        run_loop([hook], 10, caps=[3], loss=nan_from(4))
    quiet = NanTensorHook("loss", fail_on_nan_loss=False)
    quiet.loop_driven = True
    record = run_loop([quiet], 20, caps=[3], loss=nan_from(4))
    # The NaN is seen at the end of the fused run holding step 4.
    assert record.stopped and record.final_step == 6
    assert record.runs == [(0, 3), (3, 3)]


def test_nan_check_loss_directly():
    hook = NanTensorHook(None, fail_on_nan_loss=False)
    assert hook.check_loss(np.float32(0.5)) is False
    assert hook.check_loss(np.array([1.0, np.nan]), 3) is True
    with pytest.raises(NanLossDuringTrainingError):
        NanTensorHook(None).check_loss(float("nan"))


# ---- FinalOpsHook ------------------------------------------------------------------


def test_final_ops_variables_are_read_at_end():
    model = FakeModel()
    hook = FinalOpsHook({"w": model.weight, "step": model.step})
    assert hook.steps_until_needed(0) is None
    record = run_loop([hook], 7, model=model)
    assert record.runs == [(0, 7)]
    np.testing.assert_array_equal(hook.final_ops_values["w"], [7, 7])
    assert hook.final_ops_values["step"] == 7


def test_final_ops_tensors_keep_last_step_values():
    model = FakeModel()
    hook = FinalOpsHook(["metric", model.weight])
    assert hook.final_ops_values is None
    record = run_loop([hook], 4, model=model, values={"metric": lambda s: s * 2})
    assert all(length == 1 for _, length in record.runs)
    metric, weight = hook.final_ops_values
    assert metric == 8
    np.testing.assert_array_equal(weight, [4, 4])


def test_final_ops_feed_dict_is_refused():
    with pytest.raises(ValueError, match="feed_dict does not exist in TF2"):
        FinalOpsHook("x", final_ops_feed_dict={"a": 1}).begin()


# ---- GlobalStepWaiterHook ------------------------------------------------------------


def test_waiter_passes_when_step_reached():
    hook = GlobalStepWaiterHook(wait_until_step=5)
    assert hook.steps_until_needed(0) is None
    record = run_loop([hook], 3, start=5)
    assert record.runs == [(5, 3)]
    assert run_loop([GlobalStepWaiterHook(0)], 2).final_step == 2


def test_waiter_waits_for_another_thread(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    model = FakeModel()
    hook = GlobalStepWaiterHook(wait_until_step=3)
    hook.poll_secs = 0.01

    def advance():
        time.sleep(0.05)
        model.step.assign(3)

    thread = threading.Thread(target=advance)
    thread.start()
    record = run_loop([hook], 2, model=model)
    thread.join()
    assert record.final_step == 5
    assert "Waiting for global step 3 before starting training." in info_messages(caplog)


def test_waiter_bounded_wait():
    hook = GlobalStepWaiterHook(wait_until_step=100)
    hook.poll_secs = 0.01
    hook.max_wait_secs = 0.05
    with pytest.raises(RuntimeError, match="waited 0.05 s for global step 100"):
        run_loop([hook], 1)


# ---- FeedFnHook ----------------------------------------------------------------------


def test_feed_fn_hook_fails_early():
    hook = FeedFnHook(lambda: {})
    with pytest.raises(ValueError, match=r"feed_dict does not exist in TF2; feed data through input_fn \(tf\.data\)"):
        run_loop([hook], 1)
    with pytest.raises(ValueError, match="feed_dict does not exist in TF2"):
        hook.before_run(SessionRunContext(SessionRunArgs(None), None))


# ---- fusion --------------------------------------------------------------------------


def test_every_hook_allows_fusion():
    hooks = [
        LoggingTensorHook({"a": "a"}, every_n_iter=3),
        StopAtStepHook(last_step=10),
        CheckpointSaverHook("/nonexistent", save_steps=3),
        StepCounterHook(),
        NanTensorHook("loss"),
        FinalOpsHook([]),
        GlobalStepWaiterHook(0),
        FeedFnHook(lambda: {}),
    ]
    assert all(callable(getattr(h, "steps_until_needed", None)) for h in hooks)
    assert all(isinstance(h, SessionRunHook) for h in hooks)


def test_plain_hook_forces_single_steps():
    record = run_loop([SessionRunHook(), StopAtStepHook(num_steps=4)], 10)
    assert record.runs == [(0, 1), (1, 1), (2, 1), (3, 1)]


class _RecordingStepCounter(StepCounterHook):
    def __init__(self, every_n_steps):
        super().__init__(every_n_steps=every_n_steps)
        self.steps: list[int] = []

    def _log_and_record(self, elapsed_steps, elapsed_secs, step):
        self.steps.append(step)


@given(
    every_log=st.integers(1, 7),
    every_save=st.integers(1, 7),
    every_count=st.integers(1, 7),
    stop_after=st.integers(1, 30),
    num_steps=st.integers(1, 40),
    start=st.integers(0, 5),
    caps=st.lists(st.integers(1, 12), min_size=1, max_size=5),
)
def test_fused_and_single_step_schedules_agree(
    monkeypatch, tmp_path, every_log, every_save, every_count, stop_after, num_steps, start, caps
):
    saved: list[int] = []
    monkeypatch.setattr(_checkpoint, "save", lambda v, d, step, *_: saved.append(step))

    def schedule(fused):
        saved.clear()
        logged: list[int] = []
        logger_hook = LoggingTensorHook(
            {"s": "step"}, every_n_iter=every_log,
            formatter=lambda v: logged.append(int(v["s"])) or "",
        )
        counter = _RecordingStepCounter(every_count)
        hooks = [
            StopAtStepHook(num_steps=stop_after),
            logger_hook,
            CheckpointSaverHook(str(tmp_path), save_steps=every_save),
            counter,
        ]
        record = run_loop(
            hooks, num_steps, fused=fused, start=start, caps=caps,
            values={"step": lambda s: s},
        )
        return (logged, list(saved), counter.steps, record.final_step, record.stopped)

    assert schedule(True) == schedule(False)
