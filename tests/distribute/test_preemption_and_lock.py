"""SIGTERM during train() (`_preemption`) and one trainer per model_dir (`_model_dir_lock`).

Whole flows run in processes of their own (`_preemption_child.py`): a child
that SIGTERMs itself, and a child that holds model_dir while this process
tries to train there.
"""

import json
import logging
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from keras_estimator._src.checkpoint import model_dir_lock as _model_dir_lock
from keras_estimator._src.distribute import preemption as _preemption
from keras_estimator._src.engine import loop as _loop
from tests import _models

CHILD = Path(__file__).parents[1] / "_preemption_child.py"
ROOT = CHILD.parent.parent
CONFIG = ke.RunConfig(
    save_checkpoints_steps=10**6, save_summary_steps=None, log_step_count_steps=None
)


def _estimator(model_dir, config=CONFIG):
    return ke.Estimator(
        _models.mlp_model_fn,
        model_dir=str(model_dir),
        config=config,
        params={"hidden": [4]},
    )


def _input_fn(repeat=True):
    x, y = _models.make_data()
    return _models.input_fn(x, y, repeat=repeat)


def _checkpoint_step(model_dir):
    latest = _checkpoint.latest(str(model_dir))
    assert latest is not None
    return _checkpoint.step_of(latest)


def _lock_file(model_dir):
    return Path(model_dir) / _model_dir_lock.LOCK_NAME


def _spawn(*args):
    return subprocess.Popen(
        [sys.executable, str(CHILD), *map(str, args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


class _SigtermAt(ke.SessionRunHook):
    def __init__(self, step):
        self._step = step

    def after_run(self, run_context, run_values):
        if run_context.global_step == self._step:
            os.kill(os.getpid(), signal.SIGTERM)


@pytest.fixture
def restore_sigterm():
    previous = signal.getsignal(signal.SIGTERM)
    yield previous
    signal.signal(signal.SIGTERM, previous)


# ---- SIGTERM ---------------------------------------------------------------------


def test_sigterm_stops_at_run_boundary_saves_and_ends_the_process_as_sigterm_does(
    tmp_path,
):
    one, two = tmp_path / "one", tmp_path / "two"
    child = _spawn("sigterm", one, two, 7)
    stdout, stderr = child.communicate(timeout=180)
    lines = stdout.splitlines()
    # Fused runs under the program's own handler: the signal arrives inside a
    # compiled run; training ends at that run's boundary, the user's handler
    # runs after the save, and train() returns.
    stopped = int(re.fullmatch(r"hook end (\d+)", lines[0]).group(1))
    assert lines[1:4] == ["user handler 15", f"returned {stopped}", "restored True"], stdout
    assert 0 < stopped < 10**9 and stopped % _loop.MAX_FUSED_STEPS == 0
    assert _checkpoint_step(two) == stopped
    # Under SIGTERM's default handling, one step per run (a plain hook): it
    # stops at the signalled step, saves it, releases model_dir's lock and the
    # process ends by the signal, as it would have without the save; what
    # follows train() (train_and_evaluate's final export, a print) never runs.
    assert lines[4:] == ["hook end 7"], stdout
    assert not (one / "export").exists()
    assert child.returncode == -signal.SIGTERM, stderr[-3000:]
    assert _checkpoint_step(one) == 7
    assert re.search(
        r"Training stopped on SIGTERM at step 7; the checkpoint \S*model\.ckpt-7 was saved",
        stderr,
    )
    assert "Ending the process as SIGTERM's default handling does" in stderr
    assert not _lock_file(one).exists() and not _lock_file(two).exists()

    resumed = _estimator(one)
    resumed.train(_input_fn(), steps=3)
    assert resumed.get_variable_value("global_step") == 10


def test_sigterm_saves_without_checkpoint_hook_and_chains_to_previous_handler(
    tmp_path, caplog, restore_sigterm
):
    calls = []
    signal.signal(signal.SIGTERM, lambda signum, frame: calls.append(signum))
    user_handler = signal.getsignal(signal.SIGTERM)
    config = CONFIG.replace(save_checkpoints_steps=None, save_checkpoints_secs=None)
    estimator = _estimator(tmp_path, config)
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        estimator.train(_input_fn(), hooks=[_SigtermAt(3)], max_steps=100)
    assert calls == [signal.SIGTERM]
    assert signal.getsignal(signal.SIGTERM) is user_handler
    assert _checkpoint_step(tmp_path) == 3
    assert re.search(
        r"stopped on SIGTERM at step 3; the checkpoint .*-3 was saved", caplog.text
    )


def test_train_and_evaluate_stopped_by_sigterm_makes_no_final_evaluation_or_export(
    tmp_path, caplog, restore_sigterm
):
    calls = []
    signal.signal(signal.SIGTERM, lambda signum, frame: calls.append(signum))
    features = {"x": tf.io.FixedLenFeature([4], tf.float32)}
    receiver_fn = ke.export.build_parsing_serving_input_receiver_fn(features)
    exporters = [ke.FinalExporter("final", receiver_fn), ke.LatestExporter("latest", receiver_fn)]
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        metrics, exports = ke.train_and_evaluate(
            _estimator(tmp_path),
            ke.TrainSpec(_input_fn(), max_steps=100, hooks=[_SigtermAt(3)]),
            ke.EvalSpec(_input_fn(repeat=False), exporters=exporters, throttle_secs=0),
        )
    # The program's handler ran after the save, and train_and_evaluate
    # returned; the model, stopped at step 3 of 100, was neither evaluated
    # nor exported as trained (2.15, killed by the signal, did neither).
    assert calls == [signal.SIGTERM]
    assert _checkpoint_step(tmp_path) == 3
    assert metrics is None and not exports
    assert not (tmp_path / "export").exists()
    assert "no evaluation or export of its last checkpoint" in caplog.text


class _CountsEvaluations(ke.SessionRunHook):
    """An evaluation hook: counts the evaluations it takes part in."""

    def __init__(self):
        self.evaluations = 0

    def begin(self):
        self.evaluations += 1


def test_in_memory_evaluator_makes_no_final_evaluation_after_sigterm(
    tmp_path, caplog, restore_sigterm
):
    calls = []
    signal.signal(signal.SIGTERM, lambda signum, frame: calls.append(signum))
    est = _estimator(tmp_path)
    counter = _CountsEvaluations()
    evaluator = ke.experimental.InMemoryEvaluatorHook(
        est, _input_fn(repeat=False), hooks=[counter], every_n_iter=50
    )
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        est.train(_input_fn(), hooks=[evaluator, _SigtermAt(3)], max_steps=100)
    # The evaluation when training began, and none of the weights SIGTERM
    # stopped at step 3 (without the signal, end() evaluates them).
    assert calls == [signal.SIGTERM]
    assert _checkpoint_step(tmp_path) == 3
    assert counter.evaluations == 1
    assert "InMemoryEvaluatorHook makes no final evaluation" in caplog.text
    est.train(_input_fn(), hooks=[evaluator], max_steps=5)
    assert counter.evaluations == 3  # at step 3 and at the end, step 5


def test_an_error_after_sigterm_is_logged_before_the_process_ends():
    # Under the default handling the process ends by the signal even when the
    # block raised (a save that failed): the error is logged first.
    code = (
        "import os, signal\n"
        "from keras_estimator._src.distribute import preemption\n"
        "with preemption.on_sigterm():\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    raise OSError('the disk is full')\n"
        "print('went on')\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert child.returncode == -signal.SIGTERM, child.stderr[-3000:]
    assert "went on" not in child.stdout
    assert "Training stopped on SIGTERM with an error" in child.stderr
    assert "OSError: the disk is full" in child.stderr


class _RecordsHandler(ke.SessionRunHook):
    def after_run(self, run_context, run_values):
        self.handler = signal.getsignal(signal.SIGTERM)
        run_context.request_stop()


def test_handler_installed_only_during_train_in_main_thread(tmp_path, restore_sigterm):
    previous = restore_sigterm
    hook = _RecordsHandler()
    _estimator(tmp_path / "main").train(_input_fn(), hooks=[hook], steps=5)
    assert hook.handler is not previous
    assert getattr(hook.handler, "__func__", None) is _preemption.Preemption.handle
    assert signal.getsignal(signal.SIGTERM) is previous

    in_thread = _RecordsHandler()
    thread = threading.Thread(
        target=lambda: _estimator(tmp_path / "thread").train(
            _input_fn(), hooks=[in_thread], steps=5
        )
    )
    thread.start()
    thread.join(timeout=120)
    assert in_thread.handler is previous


def test_ignored_sigterm_is_left_alone(restore_sigterm):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with _preemption.on_sigterm() as preemption:
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    assert not preemption.installed


def test_stop_callback_plans_no_steps_once_signalled():
    preemption = _preemption.Preemption()
    callback = _preemption.StopOnSigterm(preemption)
    assert _loop.plan_steps([callback], 0) == _loop.MAX_FUSED_STEPS
    preemption.handle(signal.SIGTERM, None)
    # Before the loop begins, so that every worker enters it.
    assert _loop.plan_steps([callback], 0) == _loop.MAX_FUSED_STEPS
    callback.on_train_begin()
    assert _loop.plan_steps([callback], 0) == 0
    assert _loop.plan_steps([callback], 0, loop_length=50) == 0


# ---- the model_dir lock -------------------------------------------------------------


def _read_lines(stream, lines):
    for line in stream:
        lines.put(line.rstrip("\n"))


def _wait_for(lines, pattern, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            break
        match = re.fullmatch(pattern, line)
        if match:
            return match
    raise AssertionError(f"the child printed no line matching {pattern!r}")


def test_second_process_is_refused_naming_the_holder(tmp_path):
    release = tmp_path / "release"
    model_dir = tmp_path / "model"
    child = _spawn("hold", model_dir, release)
    try:
        lines = queue.Queue()
        threading.Thread(
            target=_read_lines, args=(child.stdout, lines), daemon=True
        ).start()
        pid = int(_wait_for(lines, r"holding (\d+)", timeout=120).group(1))
        assert pid == child.pid
        holder = json.loads(_lock_file(model_dir).read_text())
        assert holder["pid"] == pid and holder["host"] == socket.gethostname()

        started = time.monotonic()
        with pytest.raises(
            ValueError,
            match=rf"model_dir .* is in use by another trainer \(host '[^']+', pid {pid}, "
            r"since .*\).*delete the lock file",
        ):
            _estimator(model_dir).train(_input_fn(), steps=1)
        assert time.monotonic() - started < 5

        # Readers take no lock.
        reader = _estimator(model_dir)
        assert reader.evaluate(_input_fn(), steps=1)["global_step"] >= 0
        assert (
            len(
                list(
                    reader.predict(_input_fn(repeat=False), yield_single_examples=False)
                )
            )
            >= 1
        )
    finally:
        release.touch()
        _, stderr = child.communicate(timeout=60)
    assert child.returncode == 0, stderr[-3000:]
    assert not _lock_file(model_dir).exists()


class _TrainsAnother(ke.SessionRunHook):
    def __init__(self, other):
        self._other = other
        self.error = None
        self.lock_seen = None

    def after_run(self, run_context, run_values):
        self.lock_seen = json.loads(_lock_file(self._other.model_dir).read_text())
        try:
            self._other.train(_input_fn(), steps=1)
        except ValueError as error:
            self.error = error
        run_context.request_stop()


def test_same_process_second_estimator_is_refused(tmp_path):
    first, second = _estimator(tmp_path), _estimator(tmp_path)
    hook = _TrainsAnother(second)
    first.train(_input_fn(), hooks=[hook], steps=5)
    assert hook.lock_seen["pid"] == os.getpid()
    assert re.search(
        rf"in use by another trainer \(.*pid {os.getpid()},", str(hook.error)
    )
    assert not _lock_file(tmp_path).exists()
    second.train(_input_fn(), steps=1)  # free again


def test_stale_lock_of_dead_process_is_taken_over(tmp_path, caplog):
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait(timeout=60)
    dead_pid = finished.pid
    stale = {"host": socket.gethostname(), "pid": dead_pid, "since": "then"}
    _lock_file(tmp_path).write_text(json.dumps(stale))
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        _estimator(tmp_path).train(_input_fn(), steps=2)
    assert re.search(
        rf"Took over the lock .* no longer running \(host .*, pid {dead_pid}, since then\)",
        caplog.text,
    )
    assert not _lock_file(tmp_path).exists()
    assert _checkpoint_step(tmp_path) == 2


@pytest.mark.parametrize(
    "holder, named",
    [
        (
            {"host": "elsewhere", "pid": 1, "since": "t"},
            r"host 'elsewhere', pid 1, since t",
        ),
        (None, r"a trainer whose lock file cannot be read"),
    ],
)
def test_live_remote_or_unreadable_lock_is_respected(tmp_path, holder, named):
    # Another host's process cannot be checked; an unreadable lock names no one.
    text = "not json" if holder is None else json.dumps(holder)
    _lock_file(tmp_path).write_text(text)
    with pytest.raises(ValueError, match=rf"in use by another trainer \({named};"):
        _estimator(tmp_path).train(_input_fn(), steps=1)
    assert _lock_file(tmp_path).read_text() == text


def test_evaluate_and_predict_work_while_locked(tmp_path):
    _estimator(tmp_path).train(_input_fn(), steps=2)
    live = {"host": socket.gethostname(), "pid": os.getpid(), "since": "now"}
    _lock_file(tmp_path).write_text(json.dumps(live))
    estimator = _estimator(tmp_path)
    with pytest.raises(ValueError, match=rf"pid {os.getpid()}, since now"):
        estimator.train(_input_fn(), steps=1)
    assert estimator.evaluate(_input_fn(), steps=1)["global_step"] == 2
    assert (
        len(
            list(
                estimator.predict(_input_fn(repeat=False), yield_single_examples=False)
            )
        )
        >= 1
    )
    assert _checkpoint.latest(str(tmp_path)).endswith("model.ckpt-2")


class _Fails(ke.SessionRunHook):
    def after_run(self, run_context, run_values):
        raise RuntimeError("hook failed")


def test_lock_released_when_train_raises(tmp_path):
    with pytest.raises(RuntimeError, match="hook failed"):
        _estimator(tmp_path).train(_input_fn(), hooks=[_Fails()], steps=5)
    assert not _lock_file(tmp_path).exists()
    _estimator(tmp_path).train(_input_fn(), steps=1)


def test_lock_nests_refuses_and_skips_urls(tmp_path):
    with _model_dir_lock.held(str(tmp_path)):
        with pytest.raises(ValueError, match=rf"pid {os.getpid()}"):
            with _model_dir_lock.held(str(tmp_path)):
                pass
        assert _lock_file(tmp_path).exists()
    assert not _lock_file(tmp_path).exists()
    with _model_dir_lock.held("gs://bucket/model"):
        pass


def test_train_and_evaluate_holds_the_lock_while_evaluating(tmp_path):
    seen = []

    class SeesLock(ke.SessionRunHook):
        def after_run(self, run_context, run_values):
            seen.append(_lock_file(tmp_path).exists())

    config = CONFIG.replace(save_checkpoints_steps=3)
    metrics, _ = ke.train_and_evaluate(
        _estimator(tmp_path, config),
        ke.TrainSpec(_input_fn(), max_steps=6, hooks=[SeesLock()]),
        ke.EvalSpec(_input_fn(), steps=2, throttle_secs=0),
    )
    assert metrics["global_step"] == 6
    assert seen and all(seen)
    assert not _lock_file(tmp_path).exists()


def test_sigterm_before_the_loop_begins_runs_no_step_and_saves(
    tmp_path, caplog, restore_sigterm
):
    calls = []
    signal.signal(signal.SIGTERM, lambda signum, frame: calls.append(signum))
    _estimator(tmp_path).train(_input_fn(), steps=2)

    class Ends(ke.SessionRunHook):
        ended = False

        def end(self, session):
            self.ended = True

    def signalled_input_fn():
        os.kill(os.getpid(), signal.SIGTERM)
        return _input_fn()()

    hook = Ends()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*made no steps")
        with caplog.at_level(logging.WARNING, logger="keras_estimator"):
            _estimator(tmp_path).train(signalled_input_fn, hooks=[hook], steps=5)
    assert hook.ended and calls == [signal.SIGTERM]
    assert _checkpoint_step(tmp_path) == 2
    assert re.search(
        r"stopped on SIGTERM at step 2; the checkpoint .*-2 was saved", caplog.text
    )


def test_process_start_tells_processes_apart():
    own = _model_dir_lock.process_start(os.getpid())
    if own is None:
        pytest.fail("/proc gives no start time here; the pid-reuse check is off")
    assert own == _model_dir_lock.process_start(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert _model_dir_lock.process_start(child.pid) not in (None, own)
    finally:
        child.kill()
        child.wait(timeout=60)
    assert _model_dir_lock.process_start(child.pid) is None  # reaped: gone


def test_stale_lock_whose_pid_was_reused_is_taken_over(tmp_path, caplog):
    # The lock names a live pid (this process), but a process that started
    # at another time: the holder died and its pid went to someone else.
    own = _model_dir_lock.process_start(os.getpid())
    boot_id, _, ticks = own.rpartition(":")
    reused = {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": f"{boot_id}:{int(ticks) - 1}",
        "since": "then",
    }
    _lock_file(tmp_path).write_text(json.dumps(reused))
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        _estimator(tmp_path).train(_input_fn(), steps=2)
    assert re.search(
        rf"Took over the lock .* no longer running \(host .*, pid {os.getpid()}, "
        r"since then; that pid now belongs to another process\)",
        caplog.text,
    )
    assert not _lock_file(tmp_path).exists()
    assert _checkpoint_step(tmp_path) == 2


@pytest.mark.parametrize("started", ["same", None])
def test_lock_of_the_live_holder_is_respected(tmp_path, started):
    # Its recorded start matches the live process, or it has none (locks
    # written before start times were recorded): the pid is the holder.
    holder = {"host": socket.gethostname(), "pid": os.getpid(), "since": "now"}
    if started == "same":
        holder["started"] = _model_dir_lock.process_start(os.getpid())
    _lock_file(tmp_path).write_text(json.dumps(holder))
    with pytest.raises(ValueError, match=rf"pid {os.getpid()}, since now"):
        _estimator(tmp_path).train(_input_fn(), steps=1)
    assert json.loads(_lock_file(tmp_path).read_text()) == holder


def test_lock_records_the_holder_start(tmp_path):
    with _model_dir_lock.held(str(tmp_path)):
        record = json.loads(_lock_file(tmp_path).read_text())
    assert record["started"] == _model_dir_lock.process_start(os.getpid())
