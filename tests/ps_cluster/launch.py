"""Starts ps, worker and chief processes of one cluster on free 127.0.0.1 ports."""

import contextlib
import json
import os
import socket
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_ports(count):
    """Ports the OS hands out now on 127.0.0.1 (all held until every one is known)."""
    sockets = []
    for _ in range(count):
        handle = socket.socket()
        handle.bind(("127.0.0.1", 0))
        sockets.append(handle)
    ports = [handle.getsockname()[1] for handle in sockets]
    for handle in sockets:
        handle.close()
    return ports


def cluster_spec(num_workers, num_ps):
    ports = iter(free_ports(1 + num_workers + num_ps))
    address = lambda: f"127.0.0.1:{next(ports)}"  # noqa: E731
    return {
        "chief": [address()],
        "worker": [address() for _ in range(num_workers)],
        "ps": [address() for _ in range(num_ps)],
    }


class Cluster:
    """The processes of one cluster, each running `tests.ps_cluster.task`.

    Args:
        directory: where each task's output goes (`<type>-<index>.log`).
        num_workers: worker tasks.
        num_ps: parameter-server tasks.
    """

    def __init__(self, directory, num_workers=2, num_ps=1):
        self.directory = directory
        self.spec = cluster_spec(num_workers, num_ps)
        self.processes = {}

    def start(self, task_type, index, args):
        env = dict(os.environ)
        env["TF_CONFIG"] = json.dumps(
            {"cluster": self.spec, "task": {"type": task_type, "index": index}}
        )
        env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
        log = open(os.path.join(self.directory, f"{task_type}-{index}.log"), "w")
        with log:
            process = subprocess.Popen(
                [sys.executable, "-m", "tests.ps_cluster.task", *args],
                cwd=REPO,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.processes[(task_type, index)] = process
        return process

    def start_servers(self, args):
        """Starts every ps and worker task."""
        for task_type in ("ps", "worker"):
            for index in range(len(self.spec[task_type])):
                self.start(task_type, index, args)

    def log(self, task_type, index=0):
        with open(os.path.join(self.directory, f"{task_type}-{index}.log")) as handle:
            return handle.read()

    def stop(self):
        """Kills every task still running (only the processes this cluster started)."""
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
        for process in self.processes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)
