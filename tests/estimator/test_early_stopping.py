"""Early-stopping hooks, read_eval_metrics, InMemoryEvaluatorHook and
make_stop_at_checkpoint_step_hook, on a real Estimator.

Crafted eval metrics are written during training by `WriteMetrics` (a hook
placed before the early-stopping hook) at exact global steps, so each test
knows which check first sees which values. With `run_every_steps=5` the
checks fall on global steps 1, 6, 11, 16, ... (the first check follows the
first step, as in tf.estimator).
"""

import json
import logging
import os

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from keras_estimator._src.estimator import early_stopping as _early_stopping
from keras_estimator._src.estimator import eval_summary
from keras_estimator._src.estimator.early_stopping import (
    make_early_stopping_hook,
    make_stop_at_checkpoint_step_hook,
    read_eval_metrics,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from keras_estimator._src.estimator.evaluator_hook import InMemoryEvaluatorHook
from tests._models import input_fn, make_data, mlp_model_fn

X, Y = make_data()
PARAMS = {"hidden": [8]}
EVERY_5 = {"run_every_secs": None, "run_every_steps": 5}


def make_estimator(model_dir, **config):
    config.setdefault("tf_random_seed", 1)
    config.setdefault("log_step_count_steps", None)
    return ke.Estimator(
        mlp_model_fn, model_dir=str(model_dir), config=ke.RunConfig(**config),
        params=PARAMS,
    )


def write_scalars(eval_dir, step, metrics):
    writer = tf.summary.create_file_writer(str(eval_dir))
    with writer.as_default():
        for name, value in metrics.items():
            tf.summary.scalar(name, value, step=step)
    writer.close()


def write_raw_events(path, events):
    """Writes Event protos as an event file (TF1 `simple_value` summaries)."""
    with tf.io.TFRecordWriter(str(path)) as writer:
        for event in events:
            writer.write(event.SerializeToString())


def simple_event(step, wall_time, **metrics):
    values = [
        tf.compat.v1.Summary.Value(tag=name, simple_value=value)
        for name, value in metrics.items()
    ]
    return tf.compat.v1.Event(
        step=step, wall_time=wall_time, summary=tf.compat.v1.Summary(value=values)
    )


class WriteMetrics(ke.SessionRunHook):
    """Writes `values[step]` as eval summaries when training reaches `step`."""

    def __init__(self, eval_dir, values):
        self.eval_dir = eval_dir
        self.values = values

    def steps_until_needed(self, global_step):
        due = [step - global_step for step in self.values if step > global_step]
        return min(due) if due else None

    def after_run(self, run_context, run_values):
        metrics = self.values.get(run_context.global_step)
        if metrics:
            write_scalars(self.eval_dir, run_context.global_step, metrics)


class EveryStep(ke.SessionRunHook):
    """A hook without a schedule: every step becomes its own run."""

    def __init__(self):
        self.steps = []

    def after_run(self, run_context, run_values):
        self.steps.append(run_context.global_step)


def final_step(est):
    return int(est.get_variable_value("global_step"))


# ---- read_eval_metrics ---------------------------------------------------------


def test_read_eval_metrics_reads_simple_and_tensor_summaries(tmp_path):
    eval_dir = tmp_path / "eval"
    eval_dir.mkdir()
    write_raw_events(
        eval_dir / "events.out.tfevents.1.simple",
        [
            tf.compat.v1.Event(step=0, wall_time=1.0, file_version="brain.Event:2"),
            simple_event(10, 1.0, accuracy=0.5, loss=2.0),
            simple_event(20, 1.0, accuracy=0.75),
        ],
    )
    write_scalars(eval_dir, 20, {"loss": 1.5, "auc": 0.25})
    writer = tf.summary.create_file_writer(str(eval_dir))
    with writer.as_default():  # not scalar metrics: left out
        tf.summary.histogram("weights", [1.0, 2.0], step=20)
        tf.summary.text("note", "hello", step=20)
    writer.close()

    metrics = read_eval_metrics(str(eval_dir))
    assert list(metrics) == [10, 20]
    assert metrics[10] == {"accuracy": 0.5, "loss": 2.0}
    assert metrics[20] == {"accuracy": 0.75, "loss": 1.5, "auc": 0.25}
    assert all(isinstance(v, float) for v in metrics[20].values())
    assert read_eval_metrics(str(tmp_path / "missing")) == {}


def test_read_eval_metrics_later_events_win_and_corrupt_files_are_skipped(tmp_path):
    write_raw_events(
        tmp_path / "events.out.tfevents.2.b",
        [simple_event(5, 200.0, loss=0.25)],
    )
    write_raw_events(
        tmp_path / "events.out.tfevents.1.a",
        [simple_event(5, 100.0, loss=0.75), simple_event(5, 300.0, accuracy=0.5)],
    )
    good = tmp_path / "events.out.tfevents.3.c"
    write_raw_events(good, [simple_event(7, 1.0, loss=3.0), simple_event(8, 1.0, loss=4.0)])
    data = good.read_bytes()
    good.write_bytes(data[:-5])  # the last record is cut short

    metrics = read_eval_metrics(str(tmp_path))
    assert metrics[5] == {"loss": 0.25, "accuracy": 0.5}
    assert metrics[7] == {"loss": 3.0}
    assert 8 not in metrics


def test_read_eval_metrics_of_real_evaluations(tmp_path):
    est = make_estimator(tmp_path)
    first = est.evaluate(input_fn(X, Y, repeat=False))
    est.train(input_fn(X, Y), steps=3)
    second = est.evaluate(input_fn(X, Y, repeat=False), name="holdout")
    assert read_eval_metrics(est.eval_dir()) == {
        0: {"accuracy": pytest.approx(first["accuracy"]), "loss": pytest.approx(first["loss"])}
    }
    assert read_eval_metrics(est.eval_dir("holdout"))[3]["loss"] == pytest.approx(
        second["loss"]
    )


# ---- the stop_if_* hooks ----------------------------------------------------------

CASES = [
    # (factory, metric, argument, values written at steps, expected stop step)
    (stop_if_lower_hook, "loss", 0.5,
     {6: {"loss": 0.9}, 11: {"loss": 0.4}, 16: {"loss": 0.3}}, 11),
    (stop_if_higher_hook, "accuracy", 0.8,
     {6: {"accuracy": 0.7}, 11: {"accuracy": 0.75}, 16: {"accuracy": 0.85}}, 16),
    (stop_if_no_decrease_hook, "loss", 10,
     {1: {"loss": 1.0}, 6: {"loss": 0.8}, 11: {"loss": 0.85}, 16: {"loss": 0.9}}, 16),
    (stop_if_no_increase_hook, "accuracy", 10,
     {1: {"accuracy": 0.5}, 6: {"accuracy": 0.7}, 11: {"accuracy": 0.75},
      16: {"accuracy": 0.6}, 21: {"accuracy": 0.7}}, 21),
]


@pytest.mark.parametrize("factory, metric, argument, values, expected", CASES)
def test_stop_if_hooks_stop_when_their_condition_holds(
    tmp_path, factory, metric, argument, values, expected
):
    est = make_estimator(tmp_path)
    hook = factory(est, metric, argument, **EVERY_5)
    est.train(
        input_fn(X, Y), steps=40, hooks=[WriteMetrics(est.eval_dir(), values), hook]
    )
    assert final_step(est) == expected


def test_min_steps_ignores_earlier_results_and_named_eval_dirs(tmp_path):
    est = make_estimator(tmp_path)
    eval_dir = est.eval_dir("holdout")
    values = {6: {"loss": 0.4}, 11: {"loss": 0.6}, 16: {"loss": 0.3}}
    hook = stop_if_lower_hook(est, "loss", 0.5, eval_dir=eval_dir, min_steps=7, **EVERY_5)
    est.train(input_fn(X, Y), steps=40, hooks=[WriteMetrics(eval_dir, values), hook])
    assert final_step(est) == 16


def test_no_decrease_counts_steps_from_the_best_result_after_min_steps(tmp_path):
    est = make_estimator(tmp_path)
    # The best loss (0.1 at step 1) is before min_steps, so it does not count.
    values = {1: {"loss": 0.1}, 6: {"loss": 0.5}, 11: {"loss": 0.6}, 16: {"loss": 0.55}}
    hook = stop_if_no_decrease_hook(est, "loss", 10, min_steps=5, **EVERY_5)
    est.train(input_fn(X, Y), steps=40, hooks=[WriteMetrics(est.eval_dir(), values), hook])
    assert final_step(est) == 16


def test_stop_from_real_evaluate_summaries_and_min_steps(tmp_path):
    est = make_estimator(tmp_path)
    accuracy = est.evaluate(input_fn(X, Y, repeat=False))["accuracy"]  # at step 0
    est.train(
        input_fn(X, Y), steps=8,
        hooks=[stop_if_higher_hook(est, "accuracy", accuracy - 0.01, min_steps=1, **EVERY_5)],
    )
    assert final_step(est) == 8  # the result at step 0 is below min_steps
    est.train(
        input_fn(X, Y), steps=8,
        hooks=[stop_if_higher_hook(est, "accuracy", accuracy - 0.01, **EVERY_5)],
    )
    assert final_step(est) == 9  # the first check, after the first step


def test_missing_metric_warns_and_training_continues(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="keras_estimator")
    est = make_estimator(tmp_path)
    write_scalars(est.eval_dir(), 0, {"loss": 0.1})
    hook = stop_if_lower_hook(est, "los", 0.5, **EVERY_5)
    est.train(input_fn(X, Y), steps=12, hooks=[hook])
    assert final_step(est) == 12
    warnings = [r.getMessage() for r in caplog.records if "'los'" in r.getMessage()]
    assert len(warnings) == 1 and "['loss']" in warnings[0]


# ---- make_early_stopping_hook ------------------------------------------------------


@pytest.mark.parametrize("step_by_step", [False, True])
def test_make_early_stopping_hook_stops_at_the_first_check_that_says_so(
    tmp_path, step_by_step
):
    est = make_estimator(tmp_path)
    checked_at = []

    def should_stop():
        checked_at.append(final_step_now())
        return len(checked_at) == 3

    def final_step_now():
        return int(est._store.global_step().numpy())

    hooks = [make_early_stopping_hook(est, should_stop, run_every_secs=None, run_every_steps=10)]
    recorder = EveryStep()
    if step_by_step:
        hooks.append(recorder)
    est.train(input_fn(X, Y), steps=100, hooks=hooks)
    assert checked_at == [1, 11, 21]
    assert final_step(est) == 21
    if step_by_step:
        assert recorder.steps == list(range(1, 22))


def test_make_early_stopping_hook_with_seconds_checks_each_run(tmp_path):
    est = make_estimator(tmp_path)
    calls = []
    hook = make_early_stopping_hook(
        est, lambda: calls.append(1) or len(calls) == 2, run_every_secs=0
    )
    assert hook.steps_until_needed(0) is None  # seconds: no step constraint
    est.train(input_fn(X, Y), steps=5000, hooks=[hook, EveryStep()])
    assert final_step(est) == 2


def test_schedule_and_argument_errors(tmp_path):
    est = make_estimator(tmp_path)
    with pytest.raises(ValueError, match="run_every_secs=None"):
        make_early_stopping_hook(est, lambda: False, run_every_steps=10)
    with pytest.raises(ValueError, match="One of"):
        make_early_stopping_hook(est, lambda: False, run_every_secs=None)
    with pytest.raises(ValueError, match="run_every_secs=None"):
        stop_if_higher_hook(est, "accuracy", 0.9, run_every_steps=10)
    with pytest.raises(ValueError, match="One of"):
        stop_if_no_decrease_hook(est, "loss", 10, run_every_secs=None)
    with pytest.raises(ValueError, match="positive int"):
        make_early_stopping_hook(est, lambda: False, run_every_secs=None, run_every_steps=0)
    with pytest.raises(TypeError, match="callable"):
        make_early_stopping_hook(est, True)
    with pytest.raises(TypeError, match="Estimator"):
        stop_if_lower_hook(object(), "loss", 0.1)


# ---- InMemoryEvaluatorHook -------------------------------------------------------


def summary_steps(eval_dir, tag="loss"):
    steps = []
    for name in sorted(os.listdir(eval_dir)):
        for event in tf.compat.v1.train.summary_iterator(os.path.join(eval_dir, name)):
            if any(v.tag == tag for v in event.summary.value):
                steps.append(int(event.step))
    return sorted(steps)


class CountRuns(ke.SessionRunHook):
    def __init__(self):
        self.begins = 0
        self.runs = 0

    def begin(self):
        self.begins += 1

    def after_run(self, run_context, run_values):
        self.runs += 1


def test_in_memory_evaluator_evaluates_at_start_every_n_and_at_end(tmp_path):
    est = make_estimator(tmp_path)
    counter = CountRuns()
    hook = InMemoryEvaluatorHook(
        est, input_fn(X, Y, repeat=False), hooks=[counter], name="mem", every_n_iter=5
    )
    est.train(input_fn(X, Y), steps=12, hooks=[hook])
    assert summary_steps(est.eval_dir("mem")) == [0, 5, 10, 12]
    assert counter.begins == 4 and counter.runs == 4 * 4  # 64 examples, batches of 16
    # Training again continues the schedule; no second evaluation at the end step.
    steps = InMemoryEvaluatorHook(est, input_fn(X, Y), steps=2, name="mem2", every_n_iter=4)
    est.train(input_fn(X, Y), steps=8, hooks=[steps])
    assert summary_steps(est.eval_dir("mem2")) == [12, 16, 20]


def test_in_memory_evaluator_evaluates_current_weights(tmp_path):
    # Checkpoints every 5 steps: the evaluator's after_run at step 10 runs
    # before the saver writes model.ckpt-10, so the newest checkpoint is
    # older than the weights then.
    est = make_estimator(tmp_path / "with", save_checkpoints_steps=5)
    hook = InMemoryEvaluatorHook(est, input_fn(X, Y, repeat=False), every_n_iter=5)
    est.train(input_fn(X, Y), steps=12, hooks=[hook])
    in_memory = read_eval_metrics(est.eval_dir())
    assert list(in_memory) == [0, 5, 10, 12]
    for step in (5, 10, 12):
        at_checkpoint = est.evaluate(
            input_fn(X, Y, repeat=False),
            checkpoint_path=os.path.join(str(tmp_path / "with"), f"model.ckpt-{step}"),
            name="check",
        )
        assert in_memory[step]["loss"] == pytest.approx(at_checkpoint["loss"], rel=1e-5)
        assert in_memory[step]["accuracy"] == pytest.approx(at_checkpoint["accuracy"])
    assert in_memory[5]["loss"] != pytest.approx(in_memory[10]["loss"])

    # Evaluating inside training leaves training exactly as without it.
    plain = make_estimator(tmp_path / "without", save_checkpoints_steps=5)
    plain.train(input_fn(X, Y), steps=12)
    for name in plain.get_variable_names():
        np.testing.assert_array_equal(
            est.get_variable_value(name), plain.get_variable_value(name), err_msg=name
        )


def test_in_memory_evaluator_feeds_early_stopping(tmp_path):
    est = make_estimator(tmp_path)
    evaluator = InMemoryEvaluatorHook(est, input_fn(X, Y, repeat=False), every_n_iter=5)
    stop = stop_if_higher_hook(est, "accuracy", 0.7, **EVERY_5)
    est.train(input_fn(X, Y), steps=200, hooks=[evaluator, stop])
    metrics = read_eval_metrics(est.eval_dir())
    stopped = final_step(est)
    assert stopped < 200
    # Stopped at the first check (1, 6, 11, ...) after an evaluation above 0.7.
    first_good = min(s for s, m in metrics.items() if m["accuracy"] > 0.7 and s < stopped)
    assert stopped == first_good + 1


def test_in_memory_evaluator_validation(tmp_path):
    est = make_estimator(tmp_path / "a")
    data = input_fn(X, Y, repeat=False)
    with pytest.raises(ValueError, match="every_n_iter"):
        InMemoryEvaluatorHook(est, data, every_n_iter=0)
    with pytest.raises(TypeError, match="Estimator"):
        InMemoryEvaluatorHook(object(), data)
    with pytest.raises(TypeError, match="SessionRunHooks"):
        InMemoryEvaluatorHook(est, data, hooks=[object()])
    with pytest.raises(ValueError, match="steps"):
        InMemoryEvaluatorHook(est, data, steps=0)
    other = make_estimator(tmp_path / "b")
    with pytest.raises(ValueError, match="another Estimator"):
        est.train(input_fn(X, Y), steps=2, hooks=[InMemoryEvaluatorHook(other, data)])


# ---- make_stop_at_checkpoint_step_hook -----------------------------------------------


def test_stop_at_checkpoint_step_on_the_chief_is_stop_at_step(tmp_path):
    est = make_estimator(tmp_path)
    hook = make_stop_at_checkpoint_step_hook(est, 7)
    assert isinstance(hook, ke.StopAtStepHook) and hook.last_step == 7
    est.train(input_fn(X, Y), steps=100, hooks=[hook])
    assert final_step(est) == 7
    with pytest.raises(ValueError, match="last_step"):
        make_stop_at_checkpoint_step_hook(est, None)


def test_stop_at_checkpoint_step_on_a_worker_waits_for_the_checkpoint(
    tmp_path, monkeypatch
):
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps({
            "cluster": {"chief": ["host:1"], "worker": ["host:2"]},
            "task": {"type": "worker", "index": 0},
        }),
    )
    worker = make_estimator(tmp_path)
    assert not worker.config.is_chief
    sleeps = []

    def fake_sleep(secs):
        sleeps.append(secs)
        if len(sleeps) == 3:  # the chief's checkpoint arrives
            step = tf.Variable(6, dtype=tf.int64)
            _checkpoint.save(
                {"global_step": step}, str(tmp_path), 6, _checkpoint.RetentionPolicy()
            )

    monkeypatch.setattr(_early_stopping, "_sleep", fake_sleep)
    hook = make_stop_at_checkpoint_step_hook(worker, 5, wait_after_file_check_secs=7)
    worker.train(input_fn(X, Y), steps=100, hooks=[hook])
    assert sleeps == [7, 7, 7]
    assert int(worker._store.global_step().numpy()) == 8  # checks at 5, 6, 7, 8


@pytest.mark.parametrize(
    ("make_hook", "should_stop"),
    [
        (lambda est: stop_if_higher_hook(est, "accuracy", 0.6), True),
        (lambda est: stop_if_higher_hook(est, "accuracy", 0.8), False),
        (lambda est: stop_if_lower_hook(est, "loss", 0.5), True),
        (lambda est: stop_if_no_decrease_hook(est, "loss", 500), True),
        (lambda est: stop_if_no_increase_hook(est, "accuracy", 1500), False),
    ],
)
def test_stop_if_hooks_run_in_a_tf1_monitored_session_as_2_15s_did(
    tmp_path, make_hook, should_stop
):
    # tf.estimator 2.15's early_stopping_test: evaluations at steps 1000,
    # 2000, 3000, 3500 with loss 0.8, 0.7, 0.4, 0.41 and accuracy 0.5, 0.6,
    # 0.7, 0.68; the hook runs in a SingularMonitoredSession of the
    # program's own (global step 0) and says whether to stop. Its run
    # context has no global_step: it failed with AttributeError.
    est = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path), params=PARAMS)
    for step, loss, accuracy in [(1000, 0.8, 0.5), (2000, 0.7, 0.6),
                                 (3000, 0.4, 0.7), (3500, 0.41, 0.68)]:  # fmt: skip
        eval_summary.write_to_directory(
            {"loss": loss, "accuracy": accuracy}, step, est.eval_dir()
        )
    hook = make_hook(est)
    with tf.Graph().as_default():
        tf.compat.v1.train.create_global_step()
        no_op = tf.no_op()
        with tf.compat.v1.train.SingularMonitoredSession(hooks=[hook]) as session:
            session.run(no_op)
            assert session.should_stop() == should_stop
