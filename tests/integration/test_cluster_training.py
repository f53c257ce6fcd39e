"""train_and_evaluate on a TF_CONFIG cluster: dispatch by task type, the
evaluator task, and TF_CONFIG errors.

The evaluator tests run in this process with TF_CONFIG naming an evaluator
and a fake clock whose sleeps let an in-process "chief" train; one slow test
runs a whole cluster (chief, worker, evaluator) as separate processes.
"""

import json
import os
import pathlib

import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.distribute import multi_worker as _multi_worker
from keras_estimator._src.engine import ps_training as _ps_training
from keras_estimator._src.training import cluster as _cluster
from keras_estimator.experimental import multi_worker_strategy
from tests._models import input_fn, make_data, mlp_model_fn
from tests.cluster import launcher

X, Y = make_data(num_examples=96)
PARAMS = {"hidden": [4], "optimizer": "sgd"}
CLUSTER = {"chief": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2223"]}


def _set_tf_config(monkeypatch, task_type, index=0, cluster=CLUSTER):
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}}),
    )


def _eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(32)


def _serving_input_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, 4], name="x")
    return ke.export.ServingInputReceiver({"x": x}, {"x": x})


class RecordingExporter(ke.Exporter):
    def __init__(self):
        self.calls = []

    @property
    def name(self):
        return "recording"

    def export(
        self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export
    ):
        self.calls.append(
            (
                os.path.basename(checkpoint_path),
                eval_result["global_step"],
                is_the_final_export,
            )
        )
        return checkpoint_path


class FakeClock:
    """`_cluster`'s clock: sleeping advances it and runs `on_sleep`."""

    def __init__(self, on_sleep=lambda: None):
        self.now = 0.0
        self.sleeps = []
        self._on_sleep = on_sleep

    def install(self, monkeypatch):
        monkeypatch.setattr(_cluster, "_now", lambda: self.now)
        monkeypatch.setattr(_cluster, "_sleep", self.sleep)

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds
        self._on_sleep()


def _chief(model_dir):
    """A local Estimator writing checkpoints to model_dir, as the chief would."""
    config = ke.RunConfig(tf_random_seed=1, save_checkpoints_steps=100)
    return ke.Estimator(mlp_model_fn, str(model_dir), config, PARAMS)


def _evaluator_estimator(model_dir):
    config = ke.RunConfig(tf_random_seed=1, save_checkpoints_steps=5)
    return ke.Estimator(mlp_model_fn, str(model_dir), config, PARAMS)


def test_evaluator_evaluates_new_checkpoints_then_exits_at_max_steps(
    tmp_path, monkeypatch
):
    chief = _chief(tmp_path)  # made before TF_CONFIG names an evaluator

    def chief_trains_on():
        # While the evaluator sleeps, the chief trains five more steps.
        latest = chief.latest_checkpoint()
        if latest is None or not latest.endswith("-15"):
            chief.train(input_fn(X, Y), steps=5)

    clock = FakeClock(chief_trains_on)
    clock.install(monkeypatch)
    _set_tf_config(monkeypatch, "evaluator")
    estimator = _evaluator_estimator(tmp_path)
    recording = RecordingExporter()
    final = ke.FinalExporter("final", _serving_input_fn)
    metrics, exports = ke.train_and_evaluate(
        estimator,
        ke.TrainSpec(input_fn(X, Y), max_steps=15),
        ke.EvalSpec(
            _eval_input_fn,
            steps=None,
            exporters=[recording, final],
            start_delay_secs=30,
            throttle_secs=60,
        ),
    )
    # start_delay_secs first, then throttle_secs after each evaluation but
    # the last: each time a new checkpoint was ready, so no polling.
    assert clock.sleeps == [30, 60, 60]
    assert recording.calls == [
        ("model.ckpt-5", 5, False),
        ("model.ckpt-10", 10, False),
        ("model.ckpt-15", 15, True),
    ]
    assert metrics["global_step"] == 15
    expected = chief.evaluate(_eval_input_fn, name="check")
    assert metrics == pytest.approx(expected, rel=1e-6)
    final_exports = os.listdir(tmp_path / "export" / "final")
    assert len(final_exports) == 1
    assert (
        exports[1]
        == os.path.join(str(tmp_path), "export", "final", final_exports[0]).encode()
    )
    # The evaluator writes its summaries to model_dir/eval.
    assert tf.io.gfile.glob(str(tmp_path / "eval" / "events.out.tfevents.*"))


def test_evaluator_polls_and_skips_checkpoints_it_evaluated(tmp_path, monkeypatch):
    chief = _chief(tmp_path)
    chief.train(input_fn(X, Y), steps=3)
    polls = []

    def maybe_train():
        polls.append(clock.now)
        if len(polls) == 4:  # the chief saves again after four polls
            chief.train(input_fn(X, Y), steps=3)

    clock = FakeClock(maybe_train)
    clock.install(monkeypatch)
    _set_tf_config(monkeypatch, "evaluator")
    recording = RecordingExporter()
    ke.train_and_evaluate(
        _evaluator_estimator(tmp_path),
        ke.TrainSpec(input_fn(X, Y), max_steps=6),
        ke.EvalSpec(
            _eval_input_fn, exporters=recording, start_delay_secs=0, throttle_secs=0
        ),
    )
    assert clock.sleeps == [_cluster.POLL_SECS] * 4
    assert [call[:2] for call in recording.calls] == [
        ("model.ckpt-3", 3),
        ("model.ckpt-6", 6),
    ]


def test_evaluator_gives_up_after_its_timeout_without_checkpoints(
    tmp_path, monkeypatch
):
    clock = FakeClock()
    clock.install(monkeypatch)
    _set_tf_config(monkeypatch, "evaluator")
    results = ke.train_and_evaluate(
        _evaluator_estimator(tmp_path),
        ke.TrainSpec(input_fn(X, Y), max_steps=10),
        ke.EvalSpec(_eval_input_fn, start_delay_secs=0, throttle_secs=0),
        evaluator_timeout_secs=10,
    )
    assert results == (None, None)
    assert sum(clock.sleeps) >= 10
    assert not (tmp_path / "eval").exists()


def test_a_second_evaluator_is_rejected(tmp_path, monkeypatch):
    _set_tf_config(monkeypatch, "evaluator", index=1)
    with pytest.raises(
        ValueError, match=r'"task"\["index"\]: 1 for an "evaluator" task'
    ):
        ke.train_and_evaluate(
            _evaluator_estimator(tmp_path),
            ke.TrainSpec(input_fn(X, Y), max_steps=10),
            ke.EvalSpec(_eval_input_fn),
        )


@pytest.mark.parametrize("task_type", ["chief", "worker"])
def test_training_tasks_need_a_strategy_that_trains_across_tasks(
    tmp_path, monkeypatch, task_type
):
    _set_tf_config(monkeypatch, task_type)
    estimator = _evaluator_estimator(tmp_path)
    with pytest.raises(
        ValueError,
        match=rf"task {task_type}:0 of the training cluster .*train_distribute is None.*"
        r"multi_worker_strategy\(\)",
    ):
        ke.train_and_evaluate(
            estimator,
            ke.TrainSpec(input_fn(X, Y), max_steps=3),
            ke.EvalSpec(_eval_input_fn),
        )
    assert not estimator.latest_checkpoint()


def test_ps_tasks_serve_the_chief(tmp_path, monkeypatch):
    served = []

    def serve(config):
        served.append((config.task_type, config.task_id))
        raise SystemExit  # the real serve() never returns

    monkeypatch.setattr(_ps_training, "serve", serve)
    _set_tf_config(monkeypatch, "ps", cluster={**CLUSTER, "ps": ["127.0.0.1:2224"]})
    with pytest.raises(SystemExit):
        ke.train_and_evaluate(
            _evaluator_estimator(tmp_path),
            ke.TrainSpec(input_fn(X, Y), max_steps=3),
            ke.EvalSpec(_eval_input_fn),
        )
    assert served == [("ps", 0)]


def test_legacy_master_beside_workers_is_rejected(tmp_path, monkeypatch):
    cluster = {"master": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2223"]}
    _set_tf_config(monkeypatch, "master", cluster=cluster)
    with pytest.raises(
        ValueError, match=r"task type 'master'.*Rename the job to 'chief'"
    ):
        ke.train_and_evaluate(
            _evaluator_estimator(tmp_path),
            ke.TrainSpec(input_fn(X, Y), max_steps=3),
            ke.EvalSpec(_eval_input_fn),
        )


def test_cluster_mode_rejects_local_only_settings(tmp_path, monkeypatch):
    _set_tf_config(monkeypatch, "evaluator")
    specs = (ke.TrainSpec(input_fn(X, Y), max_steps=3), ke.EvalSpec(_eval_input_fn))
    with pytest.raises(
        ValueError, match=r"eval_every_n_steps=2 is for local train_and_evaluate"
    ):
        ke.train_and_evaluate(
            _evaluator_estimator(tmp_path), *specs, eval_every_n_steps=2
        )
    silent = ke.Estimator(
        mlp_model_fn,
        str(tmp_path),
        ke.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None),
        PARAMS,
    )
    with pytest.raises(ValueError, match=r"the RunConfig saves none"):
        ke.train_and_evaluate(silent, *specs)
    with pytest.raises(
        ValueError,
        match=r"train_and_evaluate: Must specify evaluator_timeout_secs >= 0",
    ):
        ke.train_and_evaluate(
            _evaluator_estimator(tmp_path), *specs, evaluator_timeout_secs=-1
        )


# ---- TF_CONFIG errors ---------------------------------------------------------------

BAD_TF_CONFIGS = [
    pytest.param(
        '{"cluster": {"chief": ["a:1"]',
        r"Invalid TF_CONFIG value: not valid JSON",
        id="bad-json",
    ),
    pytest.param(
        json.dumps({"cluster": CLUSTER}),
        r'Invalid TF_CONFIG "task": it is missing',
        id="missing-task",
    ),
    pytest.param(
        json.dumps({"cluster": CLUSTER, "task": {"type": "worker", "index": 1}}),
        r'Invalid TF_CONFIG "task"\["index"\]: 1 is out of range: job \'worker\' has 1 task',
        id="index-out-of-range",
    ),
    pytest.param(
        json.dumps({"cluster": CLUSTER, "task": {"type": "trainer", "index": 0}}),
        r'Invalid TF_CONFIG "task"\["type"\]: trainer is not a valid task_type',
        id="unknown-task-type",
    ),
    pytest.param(
        json.dumps(
            {
                "cluster": {"chief": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2222"]},
                "task": {"type": "chief", "index": 0},
            }
        ),
        r'Invalid TF_CONFIG "cluster": "chief"\[0\] and "worker"\[0\] have the same '
        r"address '127.0.0.1:2222'",
        id="shared-address",
    ),
]


@pytest.mark.parametrize(("tf_config", "pattern"), BAD_TF_CONFIGS)
def test_malformed_tf_config_is_a_value_error_naming_the_field(
    monkeypatch, tf_config, pattern
):
    monkeypatch.setenv("TF_CONFIG", tf_config)
    with pytest.raises(ValueError, match=pattern):
        ke.RunConfig()
    # The strategy helper reads TF_CONFIG before TensorFlow starts a server.
    with pytest.raises(ValueError, match=pattern):
        multi_worker_strategy()


def test_multi_worker_strategy_wants_host_and_port(monkeypatch):
    # RunConfig takes an address without a port, as tf.estimator 2.15 did;
    # the helper, about to connect, refuses it before TensorFlow starts a
    # server.
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps(
            {"cluster": {"chief": ["127.0.0.1"]}, "task": {"type": "chief", "index": 0}}
        ),
    )
    with pytest.raises(
        ValueError,
        match=r'Invalid TF_CONFIG "cluster"\["chief"\]\[0\]: \'127.0.0.1\' is not a '
        r"'host:port' address",
    ):
        multi_worker_strategy()


def test_multi_worker_strategy_on_an_evaluator_or_a_ps_cluster(monkeypatch):
    _set_tf_config(monkeypatch, "evaluator")
    assert multi_worker_strategy() is None
    _set_tf_config(monkeypatch, "worker", cluster={**CLUSTER, "ps": ["127.0.0.1:2224"]})
    with pytest.raises(
        ValueError,
        match=r"parameter servers .* Use tf.distribute.experimental.ParameterServerStrategy",
    ):
        multi_worker_strategy()


def test_only_the_chief_and_the_evaluator_write_to_model_dir(monkeypatch):
    for task_type, writes in [("chief", True), ("worker", False), ("evaluator", True)]:
        _set_tf_config(monkeypatch, task_type)
        assert _multi_worker.writes_to_model_dir(ke.RunConfig()) is writes
    monkeypatch.delenv("TF_CONFIG")
    assert _multi_worker.writes_to_model_dir(ke.RunConfig())


def test_cluster_errors_name_the_lost_task():
    message = (
        "Graph execution error:\n\nCollective ops is aborted by: Error reported from "
        "/job:worker/replica:0/task:1: The following tasks are unhealthy (stopped "
        "sending heartbeats):\n/job:worker/replica:0/task:1\n"
    )
    cluster = {"chief": ["h:1"], "worker": ["h:2", "h:3"]}
    assert _multi_worker._named_tasks(message, cluster) == ["worker:1 (h:3)"]
    assert _multi_worker._telling_line(message).startswith(
        "Collective ops is aborted by"
    )


# ---- a whole cluster, one process per task --------------------------------------------


def test_cluster_train_and_evaluate_with_an_evaluator_task(tmp_path):
    model_dir = tmp_path / "model"
    spec = {
        "model_dir": str(model_dir),
        "action": "train_and_evaluate",
        "max_steps": 12,
        "save_checkpoints_steps": 4,
        "evaluator_timeout_secs": 100,
    }
    results = launcher.run_tasks(
        tmp_path / "run",
        spec,
        launcher.make_cluster(),
        [("chief", 0), ("worker", 0), ("evaluator", 0)],
    )
    for result in results.values():
        assert result.returncode == 0, str(result)
    evaluator = results["evaluator_0"].result
    assert evaluator["metrics"]["global_step"] == 12
    assert results["chief_0"].result["metrics"] is None
    assert results["worker_0"].result["metrics"] is None
    latest, final = evaluator["exports"]
    assert pathlib.Path(latest).parent == model_dir / "export" / "latest"
    assert pathlib.Path(final).parent == model_dir / "export" / "final"
    assert len(os.listdir(model_dir / "export" / "final")) == 1
    eval_events = tf.io.gfile.glob(str(model_dir / "eval" / "events.*"))
    assert eval_events and all(f".{evaluator['pid']}." in e for e in eval_events)
    # The model_fn's calls (docs/differences.md). tf.estimator 2.15's
    # train_and_evaluate on this cluster (MultiWorkerMirroredStrategy,
    # reference venv) called it once per task's train(): ["train"] on the
    # chief and on the worker. So does each task's train() here: the step's
    # one trace serves the fused loop, the fetching steps and the summary
    # steps.
    assert results["chief_0"].result["model_fn_calls"] == ["train"]
    assert results["worker_0"].result["model_fn_calls"] == ["train"]
    # 2.15's evaluator called it once per evaluation and once per export;
    # here the first evaluation traces it once and later ones reuse the
    # trace, and each export calls it once, as 2.15's did.
    exports = len(os.listdir(model_dir / "export" / "latest")) + 1
    assert evaluator["model_fn_calls"] == ["eval"] + ["infer"] * exports
