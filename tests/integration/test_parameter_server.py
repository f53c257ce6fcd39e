"""Parameter-server training: RunConfig, task roles, and whole clusters.

The cluster tests start a ps, two workers and a chief as separate processes on
free 127.0.0.1 ports, each running `tests/ps_cluster/task.py` with its own
TF_CONFIG, and bound every wait. The chief's results are checked here, and
its model_dir is restored into a plain (no strategy) Estimator.
"""

import glob
import json
import os
import re
import signal
import subprocess
import time

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator._src.engine import ps_training as _ps_training
from keras_estimator._src.engine import variable_store as _variable_store
from tests.ps_cluster.launch import Cluster
from tests.ps_cluster.task import (
    MODEL_FNS,
    PARAMS,
    eval_input_fn,
    predict_input_fn,
)

CHIEF_TIMEOUT_SECS = 120
STEPS = 300


# ---- RunConfig -------------------------------------------------------------------


def _tf2_strategy():
    # A real one connects this process to a cluster as its chief; an instance
    # made without __init__ is enough for a type check.
    return object.__new__(tf.distribute.experimental.ParameterServerStrategy)


def test_run_config_accepts_the_tf2_parameter_server_strategy():
    strategy = _tf2_strategy()
    assert ke.RunConfig(train_distribute=strategy).train_distribute is strategy


def test_run_config_rejects_the_tf1_parameter_server_strategy():
    strategy = tf.compat.v1.distribute.experimental.ParameterServerStrategy()
    with pytest.raises(
        ValueError,
        match=r"train_distribute is tf\.compat\.v1\.distribute\.experimental\."
        r"ParameterServerStrategy, which only runs in TF1 graph mode\. Use the TF2 "
        r"tf\.distribute\.experimental\.ParameterServerStrategy",
    ):
        ke.RunConfig(train_distribute=strategy)


def test_run_config_rejects_parameter_servers_for_evaluation():
    with pytest.raises(ValueError, match=r"eval_distribute is a ParameterServerStrategy"):
        ke.RunConfig(eval_distribute=_tf2_strategy())


class _ShardingStrategy:
    """Stands in for a ParameterServerStrategy with a variable_partitioner."""

    class Shards:
        pass

    def scope(self):
        return tf.variable_creator_scope(lambda next_creator, **kwargs: self.Shards())


def test_sharded_variables_are_refused_with_the_fix():
    store = _variable_store.VariableStore(_ShardingStrategy())
    with pytest.raises(
        ValueError,
        match=r"made variable 'global_step' a Shards, not a tf\.Variable\. .*"
        r"create the ParameterServerStrategy without variable_partitioner",
    ):
        store.global_step()


# ---- which tasks serve -----------------------------------------------------------

_CLUSTER = {
    "chief": ["127.0.0.1:2220"],
    "worker": ["127.0.0.1:2221", "127.0.0.1:2222"],
    "ps": ["127.0.0.1:2223"],
}


@pytest.mark.parametrize(
    ("cluster", "task_type", "serves"),
    [
        (_CLUSTER, "ps", True),
        (_CLUSTER, "worker", True),
        (_CLUSTER, "chief", False),
        ({k: v for k, v in _CLUSTER.items() if k != "ps"}, "worker", False),
    ],
)
def test_ps_and_workers_of_a_ps_cluster_serve(monkeypatch, cluster, task_type, serves):
    monkeypatch.setenv(
        "TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": task_type, "index": 0}})
    )
    assert _ps_training.serves_instead_of_training(ke.RunConfig()) is serves


def test_serve_refuses_the_chief(monkeypatch):
    monkeypatch.setenv(
        "TF_CONFIG", json.dumps({"cluster": _CLUSTER, "task": {"type": "chief", "index": 0}})
    )
    with pytest.raises(ValueError, match=r"this task is 'chief' 0"):
        _ps_training.serve(ke.RunConfig())


@given(planned=st.integers(1, 5000), workers=st.integers(1, 64))
def test_a_run_is_split_evenly_over_the_workers(planned, workers):
    sizes = _ps_training.split_steps(planned, workers)
    assert sum(sizes) == planned
    assert len(sizes) == min(planned, workers)
    assert max(sizes) - min(sizes) <= 1


# ---- whole clusters --------------------------------------------------------------


def _run_cluster(
    tmp_path, *args, kill=None, model_dir=None, while_waiting=None, num_workers=2
):
    """Runs one cluster; returns the chief's result, the cluster and model_dir.

    Args:
        args: more arguments of `tests/ps_cluster/task.py`.
        kill: `(task_type, index)` of a task the chief kills, or a list of them
            (at step 50 unless `--kill_at_step` is in args).
        while_waiting: called with the chief's process while it runs.
        model_dir: default: a new one in tmp_path.
        num_workers: worker tasks of the cluster.
    """
    tmp_path.mkdir(parents=True, exist_ok=True)
    model_dir = model_dir or str(tmp_path / "model")
    result_path = str(tmp_path / "result.json")
    task_args = ["--model_dir", model_dir, "--steps", str(STEPS), "--result", result_path]
    task_args += list(args)
    cluster = Cluster(str(tmp_path), num_workers=num_workers)
    try:
        cluster.start_servers(task_args)
        for task in [kill] if isinstance(kill, tuple) else kill or []:
            task_args += ["--kill_pid", str(cluster.processes[task].pid)]
        chief = cluster.start("chief", 0, task_args)
        if while_waiting is not None:
            while_waiting(chief)
        try:
            returncode = chief.wait(timeout=CHIEF_TIMEOUT_SECS)
        except subprocess.TimeoutExpired:
            pytest.fail(
                f"The chief did not finish in {CHIEF_TIMEOUT_SECS} s:\n"
                + cluster.log("chief")[-4000:]
            )
        assert returncode == 0, cluster.log("chief")[-4000:]
        servers_alive = {
            key: process.poll() is None
            for key, process in cluster.processes.items()
            if key[0] != "chief"
        }
    finally:
        cluster.stop()
    with open(result_path) as handle:
        result = json.load(handle)
    result["servers_alive"] = servers_alive
    return result, cluster, model_dir


def _plain_estimator(model_dir, model="v1"):
    return ke.Estimator(MODEL_FNS[model], model_dir, ke.RunConfig(), PARAMS)


def _checkpoint_steps(model_dir):
    state = tf.train.get_checkpoint_state(model_dir)
    return [int(path.rsplit("-", 1)[1]) for path in state.all_model_checkpoint_paths]


def _summary_steps(model_dir, tag):
    steps = []
    for path in glob.glob(os.path.join(model_dir, "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            steps += [event.step for value in event.summary.value if value.tag == tag]
    return sorted(steps)


def _check_trained(result, model_dir):
    before, after = result["before"], result["after"]
    assert before["global_step"] == 0
    assert after["loss"] < 0.25 * before["loss"]
    assert after["accuracy"] >= 0.95
    assert after["global_step"] == STEPS
    assert _checkpoint_steps(model_dir)[-1] == after["global_step"]


def test_cluster_trains_checkpoints_and_restores_into_a_plain_estimator(tmp_path):
    result, cluster, model_dir = _run_cluster(tmp_path)
    _check_trained(result, model_dir)
    # One step per global step, seen at every run's end by a Keras callback.
    assert result["steps_run"] == STEPS
    assert result["global_steps"] == sorted(set(result["global_steps"]))
    assert result["global_steps"][-1] == STEPS
    # input_fn was called once (on the chief, traced for every worker) with an
    # InputContext of one pipeline per worker.
    assert result["input_contexts"] == [[1, 0]]
    # The chief wrote the checkpoints and summaries; ps and workers still serve.
    assert result["is_chief"]
    assert all(result["servers_alive"].values())
    for task in [("ps", 0), ("worker", 0), ("worker", 1)]:
        assert f"Serving as {task[0]} {task[1]}" in cluster.log(*task)
    assert _checkpoint_steps(model_dir) == [0, 100, 200, 300]
    assert _summary_steps(model_dir, "loss") == [1, 101, 201]
    # An op the model_fn built and nothing fetched never ran, as in 2.15.
    assert tf.train.load_variable(model_dir, "unfetched_count") == 0.0
    # The chief's model_fn calls (docs/differences.md): the first
    # evaluate(), train() and predict() once each, the step's one trace,
    # which the chief's evaluation and prediction run and the workers run
    # for every scheduled chunk and fetching step; the later evaluate()
    # none. Workers and the ps never call it. tf.estimator 2.15
    # (train_and_evaluate under the tf.compat.v1 ParameterServerStrategy,
    # reference venv) called it once per train(), evaluate() and predict()
    # on the chief and on each worker.
    assert result["model_fn_calls"] == ["eval", "train", "infer"]
    logged = re.findall(r"loss = ([\d.e-]+), step = (\d+)", cluster.log("chief"))
    assert [int(step) for _, step in logged] == [0, 50, 100, 150, 200, 250]
    assert float(logged[-1][0]) < float(logged[0][0])

    plain = _plain_estimator(model_dir)
    restored = plain.evaluate(eval_input_fn)
    assert restored["global_step"] == STEPS
    assert restored["loss"] == pytest.approx(result["after"]["loss"], rel=1e-5)
    assert restored["accuracy"] == pytest.approx(result["after"]["accuracy"])
    predicted = [p["logits"] for p in plain.predict(predict_input_fn)]
    np.testing.assert_allclose(predicted, result["predicted_logits"], rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_cluster_trains_a_keras_optimizer_one_global_step_per_step(tmp_path):
    # A Keras optimizer leaves the global step to the loop; concurrent workers
    # must still count every step exactly once at each run's end. Two train()
    # calls: the second reuses the first one's step functions and resumes.
    result, _, model_dir = _run_cluster(tmp_path, "--model", "keras", "--train_calls", "2")
    _check_trained(result, model_dir)
    assert result["steps_run"] == STEPS
    restored = _plain_estimator(model_dir, "keras").evaluate(eval_input_fn)
    assert restored["loss"] == pytest.approx(result["after"]["loss"], rel=1e-5)


@pytest.mark.slow
def test_training_stops_when_a_workers_input_ends(tmp_path):
    result, _, model_dir = _run_cluster(tmp_path, "--finite")
    steps = result["after"]["global_step"]
    # Each worker reads one epoch (8 batches); training stops at the first end.
    assert 8 <= steps <= 16
    assert result["steps_run"] == steps
    assert _checkpoint_steps(model_dir)[-1] == steps


@pytest.mark.slow
def test_training_goes_on_when_a_worker_dies(tmp_path):
    """ClusterCoordinator moves a dead worker's functions to the other workers."""
    result, cluster, model_dir = _run_cluster(tmp_path, kill=("worker", 1))
    assert result["killed_at"] >= 50
    assert not result["servers_alive"][("worker", 1)]
    assert result["servers_alive"][("worker", 0)]
    assert re.search(r"Worker /job:worker/replica:0/task:1 failed", cluster.log("chief"))
    assert "error" not in result
    # Steps a dying worker had begun may be run again elsewhere, so the
    # global step can pass the target by at most one run.
    after = result["after"]
    assert STEPS <= after["global_step"] < STEPS + 100
    assert after["accuracy"] >= 0.95
    assert after["loss"] < 0.25 * result["before"]["loss"]
    assert _plain_estimator(model_dir).evaluate(eval_input_fn)["loss"] == pytest.approx(
        after["loss"], rel=1e-5
    )


@pytest.mark.slow
def test_a_dead_parameter_server_fails_training_and_a_new_cluster_resumes(tmp_path):
    result, _, model_dir = _run_cluster(
        tmp_path / "first", "--kill_at_step", "150", kill=("ps", 0)
    )
    assert result["killed_at"] >= 150
    assert result["error"]["type"] == "UnavailableError"
    assert re.match(
        r"Parameter-server training lost parameter server /job:ps/replica:0/task:0, "
        r"which it cannot do without: the variables held there are gone\. Restart "
        r"the cluster and call train\(\) again; it resumes from the last checkpoint",
        result["error"]["message"],
    )
    assert "after" not in result
    # As the message says: a new cluster on the same model_dir resumes from
    # the last checkpoint (the ps variables are restored from it) and adds
    # its steps.
    assert _checkpoint_steps(model_dir) == [0, 100]
    resumed, _, _ = _run_cluster(tmp_path / "second", model_dir=model_dir)
    assert resumed["before"]["global_step"] == 100
    assert resumed["after"]["global_step"] == 100 + STEPS
    assert resumed["steps_run"] == STEPS
    assert resumed["after"]["accuracy"] >= 0.95


def test_sigterm_while_the_chief_waits_for_lost_workers_saves_and_returns(tmp_path):
    """No worker left: the run never ends, and SIGTERM still saves and returns."""
    ready = tmp_path / "waiting"

    def sigterm_once_waiting(chief):
        deadline = time.monotonic() + CHIEF_TIMEOUT_SECS
        while not ready.exists():
            assert chief.poll() is None, "the chief ended before the run after the kill"
            assert time.monotonic() < deadline, "the chief never began the next run"
            time.sleep(0.1)
        time.sleep(2)  # the run's functions are scheduled and wait for workers
        assert chief.poll() is None
        chief.send_signal(signal.SIGTERM)

    result, cluster, model_dir = _run_cluster(
        tmp_path,
        "--ready_file",
        str(ready),
        kill=[("worker", 0), ("worker", 1)],
        while_waiting=sigterm_once_waiting,
    )
    assert result["killed_at"] >= 50
    assert "error" not in result
    assert "SIGTERM while the run under way waits for workers" in cluster.log("chief")
    assert result["sigterm_handler_calls"] == [15]  # after the save
    # Training stopped at the step the parameter server holds and saved it.
    stopped_at = result["after"]["global_step"]
    assert stopped_at == result["killed_at"]
    assert _checkpoint_steps(model_dir)[-1] == stopped_at
    restored = _plain_estimator(model_dir).evaluate(eval_input_fn)
    assert restored["global_step"] == stopped_at
    assert restored["loss"] == pytest.approx(result["after"]["loss"], rel=1e-5)
