"""Starting a TF_CONFIG cluster of local processes for the multi-worker tests.

Every task runs `tests/cluster/task.py` with a JSON spec and its own
`TF_CONFIG`; addresses are free ports on 127.0.0.1 only. Each process has a
hard limit (SIGKILL: TensorFlow's servers ignore SIGTERM), so a test never
hangs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
TASK_SCRIPT = pathlib.Path(__file__).with_name("task.py")
HARD_LIMIT_SECS = 120


@dataclasses.dataclass
class TaskResult:
    """How one task's process ended."""

    name: str
    returncode: int | None  # None: killed at the hard limit
    result: dict[str, Any] | None  # what task.py wrote, if it got that far
    log: str

    def __str__(self) -> str:
        return f"{self.name}: rc={self.returncode}\n{self.log[-4000:]}"


def free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 (held open together so they differ)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def make_cluster(num_workers: int = 1) -> dict[str, list[str]]:
    """A chief and `num_workers` workers on free 127.0.0.1 ports."""
    ports = free_ports(1 + num_workers)
    return {
        "chief": [f"127.0.0.1:{ports[0]}"],
        "worker": [f"127.0.0.1:{port}" for port in ports[1:]],
    }


def tf_config(cluster: dict[str, list[str]], task_type: str, index: int) -> str:
    return json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}})


def run_tasks(
    tmp_path: pathlib.Path,
    spec: dict[str, Any],
    cluster: dict[str, list[str]],
    tasks: list[tuple[str, int]],
    limit_secs: float = HARD_LIMIT_SECS,
    script: pathlib.Path = TASK_SCRIPT,
    python: str = sys.executable,
) -> dict[str, TaskResult]:
    """Runs `tasks` (type, index) of `cluster` with `spec`; returns each one's end.

    Args:
        tmp_path: where specs, results and logs go.
        spec: the task script's instructions (see task.py), shared by all.
        cluster: TF_CONFIG's "cluster".
        tasks: the tasks to start, e.g. [("chief", 0), ("worker", 0)].
        limit_secs: hard limit per process, at most HARD_LIMIT_SECS.
        script: the program every task runs, given the spec's path.
        python: the interpreter that runs it (the fixture generators give
            the tf.estimator 2.15 reference one).
    """
    limit_secs = min(limit_secs, HARD_LIMIT_SECS)
    tmp_path.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    env.update(
        KERAS_BACKEND="tensorflow",
        TF_CPP_MIN_LOG_LEVEL="2",
        PYTHONPATH=str(ROOT),
        PYTHONUNBUFFERED="1",
    )
    running = {}
    for task_type, index in tasks:
        name = f"{task_type}_{index}"
        spec_path = tmp_path / f"{name}.spec.json"
        spec_path.write_text(
            json.dumps({**spec, "result_path": str(tmp_path / f"{name}.result.json")})
        )
        log = open(tmp_path / f"{name}.log", "w")  # noqa: SIM115 - closed below
        process = subprocess.Popen(
            [python, str(script), str(spec_path)],
            env={**env, "TF_CONFIG": tf_config(cluster, task_type, index)},
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=str(ROOT),
        )
        running[name] = (process, log)
    deadline = time.monotonic() + limit_secs
    results = {}
    for name, (process, log) in running.items():
        try:
            returncode: int | None = process.wait(
                timeout=max(deadline - time.monotonic(), 0)
            )
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait()
            returncode = None
        log.close()
        result_path = tmp_path / f"{name}.result.json"
        result = json.loads(result_path.read_text()) if result_path.exists() else None
        results[name] = TaskResult(
            name, returncode, result, (tmp_path / f"{name}.log").read_text()
        )
    return results
