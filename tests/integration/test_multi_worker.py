"""Estimator.train/evaluate under MultiWorkerMirroredStrategy, one OS process per task.

Each test starts a chief and a worker (`tests/cluster/task.py`) on free
127.0.0.1 ports, with a hard per-process limit, and checks them against
single-process training in this process at the same global batch.
"""

import os
import pathlib

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from tests._models import make_data, mlp_model_fn
from tests.cluster import launcher

X, Y = make_data(num_examples=96)
PARAMS = {"hidden": [4], "optimizer": "adam"}
CHIEF_AND_WORKER = [("chief", 0), ("worker", 0)]


def _single_process(model_dir, batch_size, steps_per_call):
    """The reference: one process, no strategy, `batch_size` rows per step."""

    def input_fn():
        return (
            tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(batch_size)
        )

    config = ke.RunConfig(tf_random_seed=1, save_checkpoints_steps=5)
    estimator = ke.Estimator(mlp_model_fn, str(model_dir), config, PARAMS)
    for steps in steps_per_call:
        estimator.train(input_fn, steps=steps)
    return estimator


def _eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(16)


def _run(tmp_path, name, spec, tasks=CHIEF_AND_WORKER):
    results = launcher.run_tasks(tmp_path / name, spec, launcher.make_cluster(), tasks)
    for result in results.values():
        assert result.returncode == 0, str(result)
    return results["chief_0"].result, results["worker_0"].result


def _assert_variables_close(ours, reference):
    assert sorted(ours) == sorted(reference.get_variable_names())
    for name, value in ours.items():
        np.testing.assert_allclose(
            np.asarray(value),
            reference.get_variable_value(name),
            rtol=1e-5,
            atol=1e-6,
            err_msg=name,
        )


def _files_under(directory):
    return sorted(
        str(path.relative_to(directory)) for path in pathlib.Path(directory).rglob("*")
    )


def test_two_workers_train_like_one_process_write_only_on_the_chief_and_resume(
    tmp_path,
):
    model_dir = tmp_path / "model"
    spec = {
        "model_dir": str(model_dir),
        "steps": 20,
        # Hooks that differ per worker: a seconds timer on the chief, a hook
        # fetching every step on the worker, and a stop at step 9 that only
        # the worker's hooks request.
        "busy_hooks": True,
        "stop_on_worker_at": 9,
        # The model_fn's training_chief_hooks fetch every step, on the chief.
        "chief_hook": True,
        "evaluate": True,
        # evaluate(steps=N) with an input_fn that shards when given an
        # input_context, as 2.15 never gave one to evaluate() (below).
        "evaluate_steps": [2, 3, None],
        "eval_input": "context",
        "predict": True,
        "export": True,
    }
    chief, worker = _run(tmp_path, "first", spec)
    # Each replica's batch is 8 rows of its worker's shard: 16 rows per step.
    reference = _single_process(tmp_path / "single", 16, [9])

    assert chief["contexts"] == [[2, 0, 2]]
    assert worker["contexts"] == [[2, 1, 2]]
    # Fetched global steps are those each step ran at, as in tf.estimator.
    assert worker["fetched_steps"] == list(range(0, 9))
    assert chief["chief_hook_steps"] == list(range(0, 9))
    assert worker["chief_hook_steps"] == []
    assert chief["latest_checkpoint"] == worker["latest_checkpoint"] == "model.ckpt-9"
    _assert_variables_close(chief["variables"], reference)
    assert chief["predictions"] == worker["predictions"]
    expected = [p["logits"] for p in reference.predict(_eval_input_fn)][:8]
    np.testing.assert_allclose(chief["predictions"], expected, rtol=1e-5, atol=1e-5)
    expected_metrics = reference.evaluate(_eval_input_fn)
    assert chief["evaluation"] == worker["evaluation"]
    # train(), evaluate(), predict() and the export each call the model_fn
    # once on each task, as tf.estimator 2.15 did: the step's one trace
    # creates the variables and serves every compiled function of the call.
    for task in (chief, worker):
        assert task["model_fn_calls"] == ["train", "eval", "infer", "infer"]
    assert chief["evaluation"]["global_step"] == 9
    assert chief["evaluation"]["accuracy"] == pytest.approx(
        expected_metrics["accuracy"]
    )
    assert chief["evaluation"]["loss"] == pytest.approx(
        expected_metrics["loss"], rel=1e-5
    )

    # With train_distribute alone, tf.estimator 2.15's evaluate() ran without
    # the strategy on each task: input_fn called without an input_context,
    # its first N batches read. On this checkpoint 2.15 gave, for steps 2, 3
    # and None, accuracy 0.625, 0.6875, 0.65625 and loss 0.8275625,
    # 0.8338230, 0.8448312 (reference venv, the same model_fn and
    # checkpoint): a plain Estimator's results. Under the strategy each
    # worker read its shard, N batches each: 0.6875, 0.65625, 0.65625.
    for task in (chief, worker):
        for steps, results, accuracy, loss in zip(
            (2, 3, None),
            task["evaluations"],
            (0.625, 0.6875, 0.65625),
            (0.8275625, 0.8338230, 0.8448312),
            strict=True,
        ):
            assert results["accuracy"] == accuracy
            assert results["loss"] == pytest.approx(loss, rel=1e-5)
            assert results["global_step"] == 9
            plain = reference.evaluate(_eval_input_fn, steps=steps)
            assert results["accuracy"] == plain["accuracy"]
            assert results["loss"] == pytest.approx(plain["loss"], rel=1e-5)

    # Only the chief wrote: event files carry the writer's pid, and the
    # worker exported to a private directory.
    files = _files_under(model_dir)
    events = [f for f in files if ".tfevents." in f]
    assert events and all(f".{chief['pid']}." in f for f in events), events
    assert os.path.dirname(chief["export"]).startswith(str(model_dir))
    assert not worker["export"].startswith(str(model_dir))
    assert [
        f for f in files if f.startswith("export/manual/") and f.count("/") == 2
    ] == ["export/manual/" + os.path.basename(chief["export"])]
    assert {f for f in files if f.startswith("model.ckpt-")} == {
        f"model.ckpt-{step}.{suffix}"
        for step in (0, 5, 9)
        for suffix in ("index", "data-00000-of-00001")
    }

    # A second run resumes both workers from the chief's step-9 checkpoint.
    resumed = {
        "model_dir": str(model_dir),
        "steps": 5,
        "predict": True,
    }
    chief, worker = _run(tmp_path, "second", resumed)
    # The model_fn's calls (docs/differences.md): once per train() and
    # predict() on each task, the step's one trace serving the fused loop, a
    # fetching step per set of values the hooks fetch and the summary steps.
    # tf.estimator 2.15 refused train() under MultiWorkerMirroredStrategy
    # ("Only `STANDALONE_CLIENT` mode is supported"); under
    # train_and_evaluate it called it once per train() and predict().
    assert chief["model_fn_calls"] == ["train", "infer"]
    assert worker["model_fn_calls"] == ["train", "infer"]
    reference = _single_process(tmp_path / "single_resumed", 16, [9, 5])
    assert chief["latest_checkpoint"] == worker["latest_checkpoint"] == "model.ckpt-14"
    _assert_variables_close(chief["variables"], reference)
    assert chief["predictions"] == worker["predictions"]


def test_a_killed_worker_makes_the_chief_fail_with_the_worker_named(tmp_path):
    spec = {
        "model_dir": str(tmp_path / "model"),
        "steps": 100000,
        "die_at_step": {"worker_0": 6},
        "heartbeat_timeout_secs": 3,
    }
    results = launcher.run_tasks(
        tmp_path / "run", spec, launcher.make_cluster(), CHIEF_AND_WORKER
    )
    chief, worker = results["chief_0"], results["worker_0"]
    assert worker.returncode == -9, str(worker)  # killed itself, as asked
    assert chief.returncode == 1, str(chief)  # failed, neither hung nor killed
    assert chief.result is not None
    assert chief.result["error"].startswith(
        "RuntimeError: Task chief:0 lost contact with worker:0"
    )
    assert "Restart every task listed in TF_CONFIG" in chief.result["error"]


@pytest.mark.slow
def test_a_worker_without_its_chief_gives_up_after_the_connect_timeout(tmp_path):
    cluster = launcher.make_cluster()
    spec = {
        "model_dir": str(tmp_path / "model"),
        "action": "connect",
        "connect_timeout_secs": 5,
    }
    results = launcher.run_tasks(tmp_path / "run", spec, cluster, [("worker", 0)])
    worker = results["worker_0"]
    assert worker.returncode == 1, str(worker)
    assert worker.result["error"].startswith(
        "RuntimeError: Task worker:0 could not bring up the training cluster within 5 s"
    )
    assert f"led by chief:0 ({cluster['chief'][0]})" in worker.result["error"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("policy", "reference_batch"),
    # DATA: worker i keeps batches i, i+2, ...: both together read each row
    # once, 16 rows per step. OFF: both read the same 8 rows per step.
    [("DATA", 16), ("OFF", 8)],
)
def test_input_fn_without_context_follows_the_auto_shard_policy(
    tmp_path, policy, reference_batch
):
    spec = {
        "model_dir": str(tmp_path / "model"),
        "steps": 7,
        "input": "no_context",
        "shard_policy": policy,
    }
    chief, worker = _run(tmp_path, "run", spec)
    assert chief["contexts"] == worker["contexts"] == []
    reference = _single_process(tmp_path / "single", reference_batch, [7])
    _assert_variables_close(chief["variables"], reference)
