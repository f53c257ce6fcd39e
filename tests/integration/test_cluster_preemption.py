"""SIGTERM during cluster training (`_preemption`): stop, save on the chief, resume.

Every task is a separate OS process on free 127.0.0.1 ports with a bounded
wait. A hook in the signalled task sends SIGTERM to its own process at step
K, so the notice arrives at a known step: under MultiWorkerMirroredStrategy
every worker stops at the same run boundary and the chief saves; under
ParameterServerStrategy the chief (the coordinator) stops scheduling and
saves. The signalled task has a SIGTERM handler of its own (the program's
handler, called after the save), so it goes on; under MultiWorkerMirrored
the other worker's train() raises a RuntimeError saying why it stopped (its
task reports it and exits 1). A restart resumes from the saved step. (Under the default handling the
process ends by the signal after the save:
`tests/distribute/test_preemption_and_lock.py`.)

CI runs the worker-signalled multi-worker case and the parameter-server stop;
the chief-signalled case and the parameter-server restart (each another
cluster of processes, about 20 s) are `slow`.
"""

import re

import pytest

from tests.cluster import launcher
from tests.integration.test_parameter_server import _checkpoint_steps, _run_cluster

SIGTERM_AT = 7  # not a multiple of save_checkpoints_steps (5)
CHIEF_AND_WORKER = [("chief", 0), ("worker", 0)]
LIMIT_SECS = 90


def _run_multi_worker(tmp_path, name, spec, failing=None):
    results = launcher.run_tasks(
        tmp_path / name, spec, launcher.make_cluster(), CHIEF_AND_WORKER, LIMIT_SECS
    )
    for task, result in results.items():
        # A task whose main raised exits 1, having written its result.
        assert result.returncode == (1 if task == failing else 0), str(result)
    return results["chief_0"], results["worker_0"]


@pytest.mark.parametrize(
    "signalled", [pytest.param("chief_0", marks=pytest.mark.slow), "worker_0"]
)
def test_sigterm_on_one_worker_stops_all_at_one_step_and_the_chief_saves(
    tmp_path, signalled
):
    model_dir = tmp_path / "model"
    spec = {
        "model_dir": str(model_dir),
        "steps": 40,
        "sigterm_at_step": {signalled: SIGTERM_AT},
    }
    other_task = "worker_0" if signalled == "chief_0" else "chief_0"
    chief, worker = _run_multi_worker(tmp_path, "first", spec, failing=other_task)
    signalled_result, other = (chief, worker) if signalled == "chief_0" else (worker, chief)
    assert signalled_result.result["sigterm_at"] == SIGTERM_AT
    assert signalled_result.result["sigterm_handler_calls"] == [15]
    # Both workers stopped at the step the signalled one reached, and the
    # chief saved it (between save_checkpoints_steps' saves).
    checkpoint = f"model.ckpt-{SIGTERM_AT}"
    assert signalled_result.result["latest_checkpoint"] == checkpoint
    assert _checkpoint_steps(str(model_dir)) == [0, 5, SIGTERM_AT]
    # The worker that got no SIGTERM does not return from train() as if
    # training had ended: it raises, after the save, saying why.
    assert other.result["error"].startswith(
        f"RuntimeError: Training stopped at step {SIGTERM_AT}: another worker of "
        "the cluster received SIGTERM"
    ), other.result
    assert "latest_checkpoint" not in other.result
    if signalled == "chief_0":
        assert re.search(
            rf"Training stopped on SIGTERM at step {SIGTERM_AT}; the checkpoint "
            rf"\S*{checkpoint} was saved",
            chief.log,
        ), chief.log[-4000:]
    else:
        assert re.search(
            rf"Training stopped on SIGTERM at step {SIGTERM_AT}; the chief saves",
            worker.log,
        ), worker.log[-4000:]
        assert re.search(
            rf"Training stopped on another worker's SIGTERM at step {SIGTERM_AT}; "
            rf"the checkpoint \S*{checkpoint} was saved",
            chief.log,
        ), chief.log[-4000:]

    # A restart of both tasks resumes from the saved step.
    chief, worker = _run_multi_worker(
        tmp_path, "second", {"model_dir": str(model_dir), "steps": 3}
    )
    resumed = f"model.ckpt-{SIGTERM_AT + 3}"
    assert chief.result["latest_checkpoint"] == resumed
    assert worker.result["latest_checkpoint"] == resumed


@pytest.mark.parametrize("restart", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_sigterm_on_the_parameter_server_chief_stops_scheduling_saves_and_resumes(
    tmp_path, restart
):
    result, cluster, model_dir = _run_cluster(
        tmp_path / "first", "--steps", "200", "--sigterm_at_step", "30"
    )
    # The chief stopped at the run boundary the hook asked for, saved there,
    # called the program's handler, returned from train() (and evaluated);
    # ps and workers serve on.
    assert result["sigterm_at"] == 30
    assert result["sigterm_handler_calls"] == [15]
    assert "error" not in result
    assert result["steps_run"] == 30
    assert result["after"]["global_step"] == 30
    assert _checkpoint_steps(model_dir) == [0, 30]
    assert all(result["servers_alive"].values())
    assert re.search(
        r"Training stopped on SIGTERM at step 30; the checkpoint \S*model\.ckpt-30 "
        r"was saved",
        cluster.log("chief"),
    )

    if not restart:
        return
    resumed, _, _ = _run_cluster(
        tmp_path / "second", "--steps", "20", model_dir=model_dir
    )
    assert resumed["before"]["global_step"] == 30
    assert resumed["after"]["global_step"] == 50
    assert resumed["steps_run"] == 20
    assert _checkpoint_steps(model_dir) == [0, 30, 50]
