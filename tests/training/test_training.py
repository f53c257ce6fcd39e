"""TrainSpec, EvalSpec and train_and_evaluate (local mode) on the shared tiny model.

Exports go through `FakeExportEstimator`, an Estimator whose
`export_saved_model` writes a timestamped directory holding the checkpoint
path, so exporter behaviour is checked without writing SavedModels (the
real export is covered in test_exporter.py).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import keras_estimator as ke
from keras_estimator._src.estimator.early_stopping import (
    read_eval_metrics,
    stop_if_lower_hook,
)
from keras_estimator._src.hooks import basic_hooks as _basic_hooks
from tests._models import input_fn, make_data, mlp_model_fn

X, Y = make_data()
PARAMS = {"hidden": [8]}
REPO_ROOT = Path(__file__).resolve().parents[2]


class FakeExportEstimator(ke.Estimator):
    """An Estimator whose exports are directories naming the checkpoint.

    Set on the instance: a subclass may not override export_saved_model
    (tf.estimator 2.15's rule).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.export_saved_model = self._fake_export_saved_model

    def _fake_export_saved_model(
        self,
        export_dir_base,
        serving_input_receiver_fn,
        assets_extra=None,
        as_text=False,
        checkpoint_path=None,
    ):
        os.makedirs(export_dir_base, exist_ok=True)
        stamps = [int(n) for n in os.listdir(export_dir_base) if n.isdigit()]
        export_dir = os.path.join(export_dir_base, str(max(stamps, default=1_600_000_000) + 1))
        os.makedirs(export_dir)
        with open(os.path.join(export_dir, "checkpoint_path"), "w") as handle:
            handle.write(checkpoint_path or "")
        return export_dir.encode()


def make_estimator(model_dir, cls=FakeExportEstimator, model_fn=mlp_model_fn, **config):
    config.setdefault("tf_random_seed", 1)
    config.setdefault("log_step_count_steps", None)
    config.setdefault("save_checkpoints_steps", 10)
    return cls(
        model_fn, model_dir=str(model_dir), config=ke.RunConfig(**config), params=PARAMS
    )


def eval_input():
    return input_fn(X, Y, repeat=False)


def serving_fn():
    raise AssertionError("FakeExportEstimator never calls serving_input_receiver_fn")


class RecordingExporter(ke.Exporter):
    """Records each call; exports (returns a value) only if `exports(final)`."""

    def __init__(self, name="recording", exports=lambda final: False):
        self._name = name
        self._exports = exports
        self.calls = []

    @property
    def name(self):
        return self._name

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        self.calls.append(
            {
                "step": eval_result["global_step"],
                "loss": eval_result["loss"],
                "final": is_the_final_export,
                "checkpoint": os.path.basename(checkpoint_path),
                "export_path": export_path,
            }
        )
        return f"export-{eval_result['global_step']}" if self._exports(is_the_final_export) else None


class SaveRecorder(ke.CheckpointSaverListener):
    def __init__(self, on_before_save=None):
        self.saved = []
        self.ended = []
        self._on_before_save = on_before_save

    def before_save(self, session, global_step_value):
        if self._on_before_save:
            self._on_before_save(global_step_value)

    def after_save(self, session, global_step_value):
        self.saved.append(global_step_value)

    def end(self, session, global_step_value):
        self.ended.append(global_step_value)


def evaluated(exporter):
    return [(call["step"], call["final"]) for call in exporter.calls]


# ---- TrainSpec / EvalSpec ------------------------------------------------------------


def test_specs_are_namedtuples_with_2_15_defaults():
    fn = eval_input()
    train = ke.TrainSpec(fn)
    assert train == (fn, None, (), ())
    assert train._fields == ("input_fn", "max_steps", "hooks", "saving_listeners")
    assert repr(train).startswith("TrainSpec(input_fn=")
    hook = ke.StopAtStepHook(last_step=5)
    train = ke.TrainSpec(fn, max_steps=100, hooks=[hook])
    assert train.hooks == (hook,) and train.max_steps == 100
    assert train._replace(max_steps=7).max_steps == 7
    input_fn_, max_steps, hooks, listeners = train
    assert (input_fn_, max_steps) == (fn, 100)

    spec = ke.EvalSpec(fn)
    assert spec == (fn, 100, None, (), (), 120, 600)
    assert spec._fields == (
        "input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs",
        "throttle_secs",
    )
    exporter = RecordingExporter()
    spec = ke.EvalSpec(fn, steps=None, name="holdout", exporters=exporter, throttle_secs=0)
    assert spec.exporters == (exporter,)  # a single exporter becomes a tuple
    assert spec.steps is None and spec.name == "holdout" and spec.throttle_secs == 0
    spec = ke.EvalSpec(fn, exporters=(e for e in [exporter]))
    assert spec.exporters == (exporter,)


@pytest.mark.parametrize(
    ("make", "error", "pattern"),
    [
        (lambda: ke.TrainSpec(None), TypeError, r"TrainSpec: `input_fn` must be callable, given: None"),
        (lambda: ke.TrainSpec(eval_input(), max_steps=0), ValueError, r"Must specify max_steps > 0, given: 0"),
        (lambda: ke.TrainSpec(eval_input(), max_steps=-5), ValueError, r"max_steps > 0, given: -5"),
        (lambda: ke.TrainSpec(eval_input(), max_steps="10"), TypeError, r"max_steps must be a positive int or None, got '10'"),
        (lambda: ke.TrainSpec(eval_input(), max_steps=float("nan")), ValueError, r"Must specify max_steps > 0, given: nan"),
        (lambda: ke.TrainSpec(eval_input(), hooks=[object()]), TypeError, r"^All hooks must be `SessionRunHook` instances, given: <object.*TrainSpec's hooks"),
        (lambda: ke.TrainSpec(eval_input(), hooks=ke.StopAtStepHook(last_step=1)), TypeError, r"hooks must be an iterable of SessionRunHooks.*hooks=\[\.\.\.\]"),
        (lambda: ke.TrainSpec(eval_input(), saving_listeners=[ke.StopAtStepHook(last_step=1)]), TypeError, r"saving_listeners must be `CheckpointSaverListener` instances, given: <.*StopAtStepHook.*lacks \['before_save', 'after_save'\]"),
        (lambda: ke.EvalSpec("eval.csv"), TypeError, r"EvalSpec: `input_fn` must be callable, given: 'eval.csv'"),
        (lambda: ke.EvalSpec(eval_input(), steps=0), ValueError, r"EvalSpec: Must specify steps > 0, given: 0"),
        (lambda: ke.EvalSpec(eval_input(), steps=float("inf")), ValueError, r"EvalSpec: Must specify steps > 0, given: inf"),
        (lambda: ke.EvalSpec(eval_input(), name=3), TypeError, r"`name` must be string, given: 3"),
        (lambda: ke.EvalSpec(eval_input(), start_delay_secs=-1), ValueError, r"Must specify start_delay_secs >= 0, given: -1"),
        (lambda: ke.EvalSpec(eval_input(), throttle_secs=-0.5), ValueError, r"Must specify throttle_secs >= 0, given: -0.5"),
        (lambda: ke.EvalSpec(eval_input(), throttle_secs="60"), TypeError, r"throttle_secs must be a number of seconds, got '60'"),
        (lambda: ke.EvalSpec(eval_input(), hooks=[3]), TypeError, r"^All hooks must be `SessionRunHook` instances, given: 3\. EvalSpec's hooks"),
        (lambda: ke.EvalSpec(eval_input(), exporters=5), TypeError, r"`exporters` must be an Exporter, an iterable of Exporter, or `None`, found 5"),
        (lambda: ke.EvalSpec(eval_input(), exporters=[RecordingExporter(), "latest"]), TypeError, r"found 'latest' among them"),
        (lambda: ke.EvalSpec(eval_input(), exporters=[RecordingExporter("a"), RecordingExporter("b"), RecordingExporter("a")]), ValueError, r"must have unique names; \['a'\] is used more than once. All exporter names: \['a', 'b', 'a'\].*rename one"),
        (lambda: ke.EvalSpec(eval_input(), exporters=[RecordingExporter("")]), ValueError, r"An Exporter cannot have a name that is `None` or empty"),
        (lambda: ke.EvalSpec(eval_input(), exporters=[RecordingExporter(7)]), ValueError, r"An Exporter must have a string name. Given: 7"),
    ],
)
def test_spec_validation_errors(make, error, pattern):
    with pytest.raises(error, match=pattern):
        make()


def test_train_and_evaluate_argument_errors(tmp_path):
    est = make_estimator(tmp_path)
    train, evaluation = ke.TrainSpec(input_fn(X, Y), max_steps=5), ke.EvalSpec(eval_input())
    with pytest.raises(TypeError, match=r"^`estimator` must have type `tf.estimator.Estimator` \(a keras_estimator.Estimator\), got str"):
        ke.train_and_evaluate("est", train, evaluation)
    with pytest.raises(TypeError, match=r"^`train_spec` must have type `tf.estimator.TrainSpec` .*, got tuple"):
        ke.train_and_evaluate(est, tuple(train), evaluation)
    with pytest.raises(TypeError, match=r"^`eval_spec` must have type `tf.estimator.EvalSpec` .*, got NoneType"):
        ke.train_and_evaluate(est, train, None)
    with pytest.raises(ValueError, match=r"Must specify eval_every_n_steps > 0, given: 0"):
        ke.train_and_evaluate(est, train, evaluation, eval_every_n_steps=0)
    silent = make_estimator(tmp_path / "silent", save_checkpoints_steps=None, save_checkpoints_secs=None)
    with pytest.raises(ValueError, match=r"RunConfig saves none.*pass eval_every_n_steps"):
        ke.train_and_evaluate(silent, train, evaluation)
    assert est.latest_checkpoint() is None  # nothing ran


# ---- distributed configurations ---------------------------------------------------------


@pytest.mark.parametrize("task_type", ["chief", "worker"])
def test_cluster_training_tasks_without_a_strategy_are_refused(tmp_path, monkeypatch, task_type):
    # Cluster train_and_evaluate is tested in tests/integration/test_cluster_training.py.
    tf_config = {
        "cluster": {"chief": ["localhost:2222"], "worker": ["localhost:2223"]},
        "task": {"type": task_type, "index": 0},
    }
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))
    est = make_estimator(tmp_path)
    with pytest.raises(ValueError, match=r"train_distribute is None, which does not train across tasks"):
        ke.train_and_evaluate(est, ke.TrainSpec(input_fn(X, Y), max_steps=5), ke.EvalSpec(eval_input()))


def test_a_chief_only_cluster_runs_locally(tmp_path, monkeypatch):
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps({"cluster": {"chief": ["localhost:2222"]}, "task": {"type": "chief", "index": 0}}),
    )
    est = make_estimator(tmp_path)
    metrics, exports = ke.train_and_evaluate(
        est, ke.TrainSpec(input_fn(X, Y), max_steps=5), ke.EvalSpec(eval_input(), throttle_secs=0)
    )
    assert metrics["global_step"] == 5 and exports == []


# ---- evaluation cadence -------------------------------------------------------------------


def test_nothing_is_evaluated_when_max_steps_was_already_reached(tmp_path):
    est = make_estimator(tmp_path)
    est.train(input_fn(X, Y), max_steps=5)
    exporter = RecordingExporter()
    result = ke.train_and_evaluate(
        est,
        ke.TrainSpec(input_fn(X, Y), max_steps=5),
        ke.EvalSpec(eval_input(), exporters=exporter, throttle_secs=0),
    )
    assert result == (None, None) and exporter.calls == []  # as tf.estimator 2.15


def test_throttle_zero_evaluates_every_new_checkpoint_and_returns_the_last(tmp_path):
    est = make_estimator(tmp_path)
    exporter = RecordingExporter(exports=lambda final: True)
    metrics, exports = ke.train_and_evaluate(
        est,
        ke.TrainSpec(input_fn(X, Y), max_steps=40),
        ke.EvalSpec(eval_input(), steps=None, exporters=exporter, throttle_secs=0),
    )
    # The checkpoint written when training starts is not evaluated; step 40
    # (max_steps) is evaluated after its save and is the final export.
    assert evaluated(exporter) == [(10, False), (20, False), (30, False), (40, True)]
    # Python bools, as 2.15 passed them (programs test `is True`).
    assert all(type(c["final"]) is bool for c in exporter.calls)
    assert [c["checkpoint"] for c in exporter.calls] == [f"model.ckpt-{s}" for s in (10, 20, 30, 40)]
    assert {c["export_path"] for c in exporter.calls} == {os.path.join(str(tmp_path), "export", "recording")}
    assert metrics["global_step"] == 40 and exports == ["export-40"]
    assert set(metrics) == {"accuracy", "loss", "global_step"}
    assert metrics["loss"] == pytest.approx(exporter.calls[-1]["loss"])
    assert list(read_eval_metrics(est.eval_dir())) == [10, 20, 30, 40]


def test_evaluations_match_a_separate_evaluate_and_leave_training_unchanged(tmp_path):
    est = make_estimator(tmp_path / "te")
    exporter = RecordingExporter()
    ke.train_and_evaluate(
        est,
        ke.TrainSpec(input_fn(X, Y), max_steps=30),
        ke.EvalSpec(eval_input(), steps=None, exporters=exporter, throttle_secs=0),
    )
    fresh = make_estimator(tmp_path / "te")
    for call in exporter.calls:
        alone = fresh.evaluate(
            eval_input(), checkpoint_path=os.path.join(str(tmp_path / "te"), call["checkpoint"]), name="check"
        )
        assert alone["loss"] == pytest.approx(call["loss"], rel=1e-5)
    assert exporter.calls[0]["loss"] != pytest.approx(exporter.calls[-1]["loss"])
    plain = make_estimator(tmp_path / "plain")
    plain.train(input_fn(X, Y), max_steps=30)
    for name in plain.get_variable_names():
        np.testing.assert_array_equal(est.get_variable_value(name), plain.get_variable_value(name), err_msg=name)


def test_throttle_secs_skips_checkpoints_by_time(tmp_path, monkeypatch):
    # The clock reads 10 s per global step, set when each checkpoint is saved.
    now = {"t": 0.0}
    monkeypatch.setattr(_basic_hooks, "_clock", lambda: now["t"])
    clock = SaveRecorder(on_before_save=lambda step: now.update(t=10.0 * step))
    est = make_estimator(tmp_path)
    exporter = RecordingExporter()
    ke.train_and_evaluate(
        est,
        ke.TrainSpec(input_fn(X, Y), max_steps=50, saving_listeners=[clock]),
        ke.EvalSpec(eval_input(), steps=2, exporters=exporter, throttle_secs=150),
    )
    assert clock.saved == [0, 10, 20, 30, 40, 50]
    # 10 (first, t=100), 30 (t=300 >= 100 + 150), 50 (t=500 >= 300 + 150).
    assert evaluated(exporter) == [(10, False), (30, False), (50, True)]


def test_final_evaluation_when_the_last_checkpoint_was_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(_basic_hooks, "_clock", lambda: 1000.0)  # time stands still
    est = make_estimator(tmp_path)
    exporter = RecordingExporter()
    metrics, _ = ke.train_and_evaluate(
        est,
        ke.TrainSpec(input_fn(X, Y), max_steps=45),
        ke.EvalSpec(eval_input(), steps=2, exporters=exporter, throttle_secs=60),
    )
    assert evaluated(exporter) == [(10, False), (45, True)]
    assert exporter.calls[-1]["checkpoint"] == "model.ckpt-45"
    assert metrics["global_step"] == 45


def test_final_export_when_the_input_ends_before_max_steps(tmp_path):
    est = make_estimator(tmp_path)
    final_only = RecordingExporter("final", exports=lambda final: final)
    always = RecordingExporter("always", exports=lambda final: True)
    metrics, exports = ke.train_and_evaluate(
        est,
        ke.TrainSpec(input_fn(X, Y, repeat=False), max_steps=100),  # 4 batches
        ke.EvalSpec(eval_input(), steps=2, exporters=[final_only, always], throttle_secs=0),
    )
    assert metrics["global_step"] == 4
    # The checkpoint saved when training ends is evaluated after its save;
    # then, at the end, the exporters that skipped it are called again as
    # the final export (tf.estimator 2.15 made no final export here).
    assert evaluated(final_only) == [(4, False), (4, True)]
    assert evaluated(always) == [(4, False)]
    assert exports == ["export-4", "export-4"]


def test_eval_every_n_steps_saves_checkpoints_once_and_evaluates_on_multiples(tmp_path):
    saves = SaveRecorder()
    est = make_estimator(tmp_path, save_checkpoints_steps=1000)
    exporter = RecordingExporter()
    ke.train_and_evaluate(
        est,
        ke.TrainSpec(input_fn(X, Y), max_steps=35, saving_listeners=[saves]),
        ke.EvalSpec(eval_input(), steps=2, exporters=exporter, throttle_secs=10_000),
        eval_every_n_steps=10,
    )
    assert evaluated(exporter) == [(10, False), (20, False), (30, False), (35, True)]
    assert [c["checkpoint"] for c in exporter.calls] == [f"model.ckpt-{s}" for s in (10, 20, 30, 35)]
    assert saves.saved == [0, 10, 20, 30, 35] and saves.ended == [35]

    # Same cadence as the RunConfig's: each checkpoint is still written once.
    same = SaveRecorder()
    est = make_estimator(tmp_path / "same", save_checkpoints_steps=10)
    ke.train_and_evaluate(
        est,
        ke.TrainSpec(input_fn(X, Y), max_steps=30, saving_listeners=[same]),
        ke.EvalSpec(eval_input(), steps=2, exporters=exporter, throttle_secs=0),
        eval_every_n_steps=10,
    )
    assert same.saved == [0, 10, 20, 30]
    assert evaluated(exporter)[-3:] == [(10, False), (20, False), (30, True)]


def test_eval_every_n_steps_without_checkpoint_cadence(tmp_path):
    est = make_estimator(tmp_path, save_checkpoints_steps=None, save_checkpoints_secs=None)
    exporter = RecordingExporter()
    metrics, _ = ke.train_and_evaluate(
        est,
        ke.TrainSpec(input_fn(X, Y), max_steps=25),
        ke.EvalSpec(eval_input(), steps=2, exporters=exporter),
        eval_every_n_steps=10,
    )
    assert evaluated(exporter) == [(10, False), (20, False), (25, True)]
    assert metrics["global_step"] == 25 and est.latest_checkpoint().endswith("model.ckpt-25")


def test_the_compiled_eval_function_is_reused_across_evaluations(tmp_path):
    eval_traces = []

    def counting_model_fn(features, labels, mode, params):
        if mode == ke.ModeKeys.EVAL:
            eval_traces.append(1)
        return mlp_model_fn(features, labels, mode, params)

    est = make_estimator(tmp_path, model_fn=counting_model_fn)
    traces_at_export = []

    class TraceCounter(RecordingExporter):
        def export(self, *args, **kwargs):
            traces_at_export.append(len(eval_traces))
            return super().export(*args, **kwargs)

    ke.train_and_evaluate(
        est,
        ke.TrainSpec(input_fn(X, Y), max_steps=50),
        ke.EvalSpec(eval_input(), steps=2, exporters=TraceCounter(), throttle_secs=0),
    )
    assert len(traces_at_export) == 5
    assert traces_at_export[0] > 0
    assert traces_at_export == [traces_at_export[0]] * 5  # no retrace after the first


# ---- early stopping and named evaluations ---------------------------------------------------


@pytest.mark.parametrize("name", [None, "holdout"])
def test_early_stopping_hook_stops_on_an_evaluation_result(tmp_path, name):
    est = make_estimator(tmp_path)
    stop = stop_if_lower_hook(
        est, "loss", 0.5, eval_dir=est.eval_dir(name), run_every_secs=None, run_every_steps=1
    )
    final = RecordingExporter("final", exports=lambda final: final)
    metrics, exports = ke.train_and_evaluate(
        est,
        ke.TrainSpec(input_fn(X, Y), max_steps=500, hooks=[stop]),
        ke.EvalSpec(eval_input(), steps=None, name=name, exporters=final, throttle_secs=0),
    )
    written = read_eval_metrics(est.eval_dir(name))
    first_good = min(step for step, m in written.items() if m["loss"] < 0.5)
    # As in 2.15, the checkpoint saver (whose listener evaluates) runs
    # before the user's hook: the hook sees the evaluation of step
    # `first_good` at that step, and training ends there (2.15, this
    # setup in its venv: evaluations at 10 and 20, final global step 20).
    assert metrics["global_step"] == first_good < 500
    assert evaluated(final)[-1] == (first_good, True)
    assert exports == [f"export-{first_good}"]
    other = "eval" if name else "eval_holdout"
    assert not os.path.exists(os.path.join(str(tmp_path), other))


def first_best_exporter_run(model_dir):
    """Trains to step 30 with a BestExporter on a named evaluation; returns the losses."""
    est = make_estimator(model_dir)
    recorder = RecordingExporter()
    best = ke.BestExporter(serving_input_receiver_fn=serving_fn)
    ke.train_and_evaluate(
        est,
        ke.TrainSpec(input_fn(X, Y), max_steps=30),
        ke.EvalSpec(eval_input(), steps=None, name="holdout", exporters=[recorder, best], throttle_secs=0),
    )
    # Python floats (exactly the float32 values): the restart test sends them as JSON.
    return [float(call["loss"]) for call in recorder.calls]


def check_best_exporter_after_restart(model_dir, first_losses):
    """A new Estimator and BestExporter, with far worse results, must not export."""
    export_dir = os.path.join(str(model_dir), "export", "best_exporter")
    exports_before = sorted(os.listdir(export_dir))
    assert len(exports_before) == len(first_losses) == 3  # the loss fell each time
    compared = []

    def loss_smaller(best_eval_result, current_eval_result):
        compared.append(best_eval_result["loss"])
        return best_eval_result["loss"] > current_eval_result["loss"]

    # Scrambled labels make the evaluation loss far worse than before.
    scrambled = input_fn(X, (Y + 1) % 3, repeat=False)
    est = make_estimator(model_dir)
    best = ke.BestExporter(serving_input_receiver_fn=serving_fn, compare_fn=loss_smaller)
    metrics, exports = ke.train_and_evaluate(
        est,
        ke.TrainSpec(input_fn(X, Y), max_steps=40),
        ke.EvalSpec(scrambled, steps=None, name="holdout", exporters=best, throttle_secs=0),
    )
    assert metrics["global_step"] == 40 and metrics["loss"] > max(first_losses)
    assert exports == [None]
    assert sorted(os.listdir(export_dir)) == exports_before
    # It compared against the best of the first run, read from eval_holdout/.
    assert compared[-1] == pytest.approx(min(first_losses), rel=1e-6)


def test_named_best_exporter_recovers_with_a_new_estimator(tmp_path):
    check_best_exporter_after_restart(tmp_path, first_best_exporter_run(tmp_path))


@pytest.mark.slow
def test_named_best_exporter_recovers_across_a_process_restart(tmp_path):
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(REPO_ROOT)!r})\n"
        "from tests.training.test_training import first_best_exporter_run\n"
        f"print(json.dumps(first_best_exporter_run({str(tmp_path)!r})))\n"
    )
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    check_best_exporter_after_restart(tmp_path, json.loads(done.stdout.strip().splitlines()[-1]))
