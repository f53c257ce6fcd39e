"""Parsing the `TF_CONFIG` environment variable into cluster facts.

This module owns turning the `TF_CONFIG` text (a JSON object with a `cluster`
of task type -> list of addresses and a `task` of `{"type": ..., "index":
...}`) into a `_ClusterInfo`: this process's task type and index, the cluster
spec, the session masters, whether it is the chief, the replica counts and its
global id. `_parse_tf_config` is the entry point; every other name here is one
of its helpers. Malformed `TF_CONFIG` raises `ValueError` naming the field that
is wrong and how to fix it; where tf.estimator 2.15 raised for the same input,
its sentence comes first (and its `TypeError` for a non-object "service" is
kept: that error is both).

`RunConfig` (in `run_config`) reads the environment variable and copies these
facts into its cluster properties.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

import tensorflow as tf

_LOCAL_MASTER = ""


class TaskType:
    """Names of the jobs a `TF_CONFIG` cluster can hold."""

    MASTER = "master"  # Legacy name for the chief; cannot be mixed with CHIEF.
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


_CLUSTER_JOBS = (TaskType.CHIEF, TaskType.MASTER, TaskType.WORKER, TaskType.PS)
_TASK_TYPES = (*_CLUSTER_JOBS, TaskType.EVALUATOR)
_ENVIRONMENTS = ("cloud", "google")

_TF_CONFIG_EXAMPLE = (
    '{"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222"]}, '
    '"task": {"type": "worker", "index": 0}}'
)


@dataclasses.dataclass(frozen=True)
class _ClusterInfo:
    """What `TF_CONFIG` says about this process; local defaults when unset."""

    cluster_spec: tf.train.ClusterSpec
    task_type: str = TaskType.WORKER
    task_id: int = 0
    master: str = _LOCAL_MASTER
    evaluation_master: str = _LOCAL_MASTER
    is_chief: bool = True
    num_ps_replicas: int = 0
    num_worker_replicas: int = 1
    global_id_in_cluster: int | None = 0
    service: dict | None = None
    environment: str | None = None
    rpc_layer: str | None = None
    model_dir: str | None = None
    # False for a cluster without a "task" (taken under a train_distribute).
    names_task: bool = True


class _TfConfigTypeError(TypeError, ValueError):
    """A `TF_CONFIG` field of the wrong JSON type where tf.estimator 2.15 raised TypeError.

    Also a `ValueError`, as every other malformed `TF_CONFIG` error here.
    """


def _tf_config_error(
    field: str, problem: str, fix: str, lead: str | None = None
) -> ValueError:
    """The error for a malformed field; `lead` is tf.estimator 2.15's sentence for it.

    Where 2.15 raised for the same input its message comes first, so code
    matching 2.15's text keeps matching; then which field is wrong and the fix.
    """
    message = f"Invalid TF_CONFIG {field}: {problem}. {fix}"
    return ValueError(f"{lead} {message}" if lead else message)


def _load_tf_config(env_value: str | None) -> dict:
    """Decodes the `TF_CONFIG` text into a dict ({} when unset or blank)."""
    if env_value is None or not env_value.strip():
        return {}
    try:
        decoded = json.loads(env_value)
    except json.JSONDecodeError as err:
        raise _tf_config_error(
            "value",
            f"not valid JSON ({err.msg} at line {err.lineno} column {err.colno}) "
            f"in {env_value!r}",
            f"Set TF_CONFIG to a JSON object such as {_TF_CONFIG_EXAMPLE}.",
        ) from None
    if not isinstance(decoded, dict):
        raise _tf_config_error(
            "value",
            f"expected a JSON object, got {type(decoded).__name__} {decoded!r}",
            f"Set TF_CONFIG to a JSON object such as {_TF_CONFIG_EXAMPLE}.",
        )
    return decoded


def _optional_string(tf_config: dict, key: str) -> str | None:
    value = tf_config.get(key)
    if value is not None and not (isinstance(value, str) and value):
        raise _tf_config_error(
            f'"{key}"',
            f"expected a non-empty string, got {value!r}",
            f'Set "{key}" to a string or remove it.',
        )
    return value


def _read_top_level_fields(tf_config: dict) -> dict[str, Any]:
    """Validates the optional fields of `TF_CONFIG` other than cluster and task."""
    service = tf_config.get("service")
    if service is not None and not isinstance(service, dict):
        raise _TfConfigTypeError(
            f'If "service" is set in TF_CONFIG, it must be a dict. Given '
            f'{type(service)}. Invalid TF_CONFIG "service": expected a JSON '
            f'object, got {service!r}. Set "service" to an object or remove it.'
        )
    environment = tf_config.get("environment")
    if environment is not None and environment not in _ENVIRONMENTS:
        raise _tf_config_error(
            '"environment"',
            f"expected one of {list(_ENVIRONMENTS)}, got {environment!r}",
            'Use "cloud" or "google", or remove "environment".',
        )
    if tf_config.get("model_dir") == "":
        raise _tf_config_error(
            '"model_dir"',
            "it is the empty string",
            'Set "model_dir" to a directory path or remove it.',
            lead="model_dir in TF_CONFIG should be non-empty.",
        )
    return {
        "service": service,
        "environment": environment,
        "rpc_layer": _optional_string(tf_config, "rpc_layer"),
        "model_dir": _optional_string(tf_config, "model_dir"),
    }


def _read_cluster(tf_config: dict, check_addresses: bool) -> dict[str, list[str]]:
    """Validates `TF_CONFIG["cluster"]`; returns its non-empty jobs."""
    cluster = tf_config.get("cluster")
    if cluster is None:
        cluster = {}
    if not isinstance(cluster, dict):
        raise _tf_config_error(
            '"cluster"',
            f"expected an object of task type -> list of addresses, got {cluster!r}",
            f"Use for example {_TF_CONFIG_EXAMPLE}.",
        )
    jobs: dict[str, list[str]] = {}
    for job, addresses in cluster.items():
        # Jobs other than chief/master/worker/ps (e.g. "local", "alloc") are
        # kept in the cluster spec, as tf.estimator 2.15 kept them.
        if not job:
            raise _tf_config_error(
                '"cluster"',
                "it has a job with an empty name",
                'Name every job, e.g. "chief", "worker" or "ps".',
            )
        if not isinstance(addresses, list) or not all(
            isinstance(address, str) and address for address in addresses
        ):
            raise _tf_config_error(
                f'"cluster"["{job}"]',
                f"expected a list of 'host:port' strings, got {addresses!r}",
                f'Write it as {{"{job}": ["host0:2222", "host1:2222"]}}.',
            )
        if check_addresses:
            for index, address in enumerate(addresses):
                _check_address(job, index, address)
        if addresses:
            jobs[job] = list(addresses)
    _check_distinct_addresses(jobs)
    return jobs


def _split_evaluators(jobs: dict[str, list[str]]) -> list[str]:
    """Takes an "evaluator" job out of `jobs`; returns its addresses.

    tf.estimator 2.15 accepted the evaluator listed in "cluster" (the layout of
    its multi-worker examples) beside the form without it; either way the
    evaluator is not part of the training cluster, so it is kept out of the
    cluster the training tasks see, and only counted in global ids as 2.15
    counted it.
    """
    return jobs.pop(TaskType.EVALUATOR, [])


def _check_address(job: str, index: int, address: str) -> None:
    """An address must be "host:port" (IPv6 hosts in brackets), port 0-65535.

    Checked only where this package connects to the cluster
    (`multi_worker_strategy`): tf.estimator 2.15's RunConfig took any
    address, with or without a port, and so does `RunConfig` here. Port 0
    ("host0:0") is accepted.
    """
    host, _, port = address.rpartition(":")
    # isdigit() alone also accepts digits such as "²" that int() refuses.
    is_number = port.isascii() and port.isdigit()
    if not host or not is_number or not 0 <= int(port) < 65536:
        raise _tf_config_error(
            f'"cluster"["{job}"][{index}]',
            f"{address!r} is not a 'host:port' address",
            f'Write it as "host:port", e.g. "{address.rstrip(":") or "host"}:2222".',
        )


def _check_distinct_addresses(jobs: dict[str, list[str]]) -> None:
    """Two tasks cannot listen on one address."""
    seen: dict[str, str] = {}
    for job, addresses in jobs.items():
        for index, address in enumerate(addresses):
            task = f'"{job}"[{index}]'
            if address in seen:
                raise _tf_config_error(
                    '"cluster"',
                    f"{seen[address]} and {task} have the same address {address!r}",
                    "Give every task its own host:port.",
                )
            seen[address] = task


def _read_task_index(index: Any) -> int:
    if isinstance(index, str) and index.strip().isascii() and index.strip().isdigit():
        index = int(index)
    if isinstance(index, bool) or not isinstance(index, int):
        raise _tf_config_error(
            '"task"["index"]',
            f"expected a non-negative integer, got {index!r}",
            'Set "index" to the position of this task in its job, starting at 0.',
        )
    if index < 0:
        raise _tf_config_error(
            '"task"["index"]',
            f"it is negative ({index})",
            'Set "index" to the position of this task in its job, starting at 0.',
            lead="Task index must be non-negative number.",
        )
    return index


_TASK_TYPE_UNSET = 'If "cluster" is set in TF_CONFIG, task type must be set.'


def _read_task(tf_config: dict, in_cluster: bool) -> tuple[str, int]:
    """Validates `TF_CONFIG["task"]`; without a cluster it defaults to worker 0."""
    task = tf_config.get("task")
    if task is None and not in_cluster:
        return TaskType.WORKER, 0
    if not isinstance(task, dict):
        problem = (
            "it is missing" if task is None else f"expected an object, got {task!r}"
        )
        raise _tf_config_error(
            '"task"',
            problem,
            'Add "task": {"type": <one of the cluster\'s task types>, '
            '"index": <position in that job>} to TF_CONFIG.',
            lead=_TASK_TYPE_UNSET if task is None else None,
        )
    task_type = task.get("type", None if in_cluster else TaskType.WORKER)
    if not isinstance(task_type, str) or not task_type:
        raise _tf_config_error(
            '"task"["type"]',
            "it is missing"
            if task_type is None
            else f"expected a string, got {task_type!r}",
            f'Set "type" to one of {list(_TASK_TYPES)}.',
            lead=_TASK_TYPE_UNSET if in_cluster and not task_type else None,
        )
    if task.get("index") is None and in_cluster:
        raise _tf_config_error(
            '"task"["index"]',
            "it is missing",
            'Set "index" to the position of this task in its job, starting at 0.',
            lead='If "cluster" is set in TF_CONFIG, task index must be set.',
        )
    return task_type, _read_task_index(task.get("index", 0))


def _check_cluster_shape(jobs: dict[str, list[str]]) -> str | None:
    """Checks the job layout; returns the chief job name, or None (worker 0 leads)."""
    if TaskType.CHIEF in jobs and TaskType.MASTER in jobs:
        raise _tf_config_error(
            '"cluster"',
            'it has both a "chief" and a "master" job',
            'Keep one of them ("master" is the legacy name for "chief").',
            lead="If `master` node exists in `cluster`, job `chief` is not supported.",
        )
    chief_job = next((j for j in (TaskType.CHIEF, TaskType.MASTER) if j in jobs), None)
    if chief_job is not None and len(jobs[chief_job]) != 1:
        raise _tf_config_error(
            f'"cluster"["{chief_job}"]',
            f"it lists {len(jobs[chief_job])} addresses, but a cluster has one chief",
            f'List exactly one address under "{chief_job}"; put the others '
            'under "worker".',
            lead=f'The "cluster" in TF_CONFIG must have only one "{chief_job}" node.',
        )
    if chief_job is None and TaskType.WORKER not in jobs:
        raise _tf_config_error(
            '"cluster"',
            f'it has {sorted(jobs)} but no "chief" or "worker" job to run training',
            'Add a "chief" (or "worker") job with at least one address.',
        )
    return chief_job


def _check_task_in_cluster(
    jobs: dict[str, list[str]], task_type: str, task_id: int, chief_job: str | None
) -> None:
    if task_type == TaskType.EVALUATOR:
        if chief_job == TaskType.MASTER:
            raise _tf_config_error(
                '"task"["type"]',
                'an "evaluator" task cannot be used with a legacy "master" cluster',
                'Rename the "master" job to "chief".',
                lead="If `master` node exists in `cluster`, task_type `evaluator` is "
                "not supported.",
            )
        return
    if task_type not in jobs:
        raise _tf_config_error(
            '"task"["type"]',
            f"{task_type} is not a valid task_type in the cluster_spec {sorted(jobs)}",
            'Set "type" to one of the jobs listed in "cluster", or to "evaluator".',
        )
    if task_id >= len(jobs[task_type]):
        raise _tf_config_error(
            '"task"["index"]',
            f"{task_id} is out of range: job {task_type!r} has "
            f"{len(jobs[task_type])} task(s), so valid indices are "
            f"0..{len(jobs[task_type]) - 1}",
            f"Use an index below {len(jobs[task_type])} or add addresses to the job.",
            lead=f"{task_id} is not a valid task_id for task_type {task_type} in the "
            f"cluster_spec {jobs}.",
        )


def _global_id(
    jobs: dict[str, list[str]],
    task_type: str,
    task_id: int,
    chief_job: str | None,
    evaluators: Sequence[str] = (),
) -> int:
    """Numbers every task: the chief first, then workers, then parameter servers.

    An evaluator listed in "cluster" takes its place among the other jobs (by
    name), as in 2.15.
    """
    numbered = dict(jobs)
    if evaluators:
        numbered[TaskType.EVALUATOR] = list(evaluators)
    order = [chief_job] if chief_job else []
    order += sorted(j for j in numbered if j not in (chief_job, TaskType.PS))
    order += [TaskType.PS] if TaskType.PS in numbered else []
    offset = 0
    for job in order:
        if job == task_type:
            return offset + task_id
        offset += len(numbered[job])
    raise AssertionError(f"task type {task_type!r} not in {order}")  # validated above


def _session_master(
    jobs: dict[str, list[str]],
    task_type: str,
    task_id: int,
    tf_config: dict,
    scheme: str,
) -> str:
    if "session_master" in tf_config:
        return tf_config["session_master"]
    if sum(len(addresses) for addresses in jobs.values()) == 1:
        return _LOCAL_MASTER  # A one-task "cluster" runs in process.
    return f"{scheme}://{jobs[task_type][task_id]}"


def _cluster_info(
    tf_config: dict,
    jobs: dict[str, list[str]],
    extras: dict,
    evaluators: Sequence[str] = (),
) -> _ClusterInfo:
    """Derives the cluster properties for a process in a (non-empty) cluster."""
    chief_job = _check_cluster_shape(jobs)
    if chief_job is None and tf_config.get("task") is None:
        # 2.15 checked the chief first: a cluster without one (and without a
        # task naming worker 0's role) was refused for the missing chief.
        raise _tf_config_error(
            '"task"',
            'it is missing, and the cluster has no "chief" job to lead training',
            'Add "task": {"type": <one of the cluster\'s task types>, "index": '
            '<position in that job>} to TF_CONFIG, or a "chief" job to "cluster".',
            lead='If "cluster" is set in TF_CONFIG, it must have one "chief" node.',
        )
    task_type, task_id = _read_task(tf_config, in_cluster=True)
    _check_task_in_cluster(jobs, task_type, task_id, chief_job)
    if task_type == TaskType.EVALUATOR:
        return _ClusterInfo(
            cluster_spec=tf.train.ClusterSpec({}),
            task_type=task_type,
            task_id=task_id,
            evaluation_master=tf_config.get("eval_session_master", _LOCAL_MASTER),
            is_chief=False,
            num_worker_replicas=0,
            global_id_in_cluster=None,
            **extras,
        )
    scheme = extras["rpc_layer"] or "grpc"
    if chief_job is not None:
        is_chief = task_type == chief_job
    else:
        is_chief = task_type == TaskType.WORKER and task_id == 0
    return _ClusterInfo(
        cluster_spec=tf.train.ClusterSpec(jobs),
        task_type=task_type,
        task_id=task_id,
        master=_session_master(jobs, task_type, task_id, tf_config, scheme),
        is_chief=is_chief,
        num_ps_replicas=len(jobs.get(TaskType.PS, [])),
        num_worker_replicas=len(jobs.get(TaskType.WORKER, []))
        + (1 if chief_job else 0),
        global_id_in_cluster=_global_id(
            jobs, task_type, task_id, chief_job, evaluators
        ),
        **extras,
    )


def _parse_tf_config(
    env_value: str | None,
    trains_under_strategy: bool = False,
    check_addresses: bool = False,
) -> _ClusterInfo:
    """Turns the `TF_CONFIG` text (None when unset) into this process's role.

    Args:
        env_value: the `TF_CONFIG` text.
        trains_under_strategy: whether the RunConfig has a `train_distribute`.
            tf.estimator 2.15 then took a cluster without a "master" job and
            without a "task" (its distribute coordinator was to name the task
            later): the process has the local worker's properties and the
            cluster's spec. Without a strategy such a TF_CONFIG is refused, as
            in 2.15.
        check_addresses: refuse an address that is not "host:port", for a
            process about to connect to the cluster. 2.15's RunConfig took
            any address ("host", "host:"), and so does RunConfig.

    Raises:
        ValueError: if `TF_CONFIG` is malformed; the message names the field.
    """
    tf_config = _load_tf_config(env_value)
    extras = _read_top_level_fields(tf_config)
    for key in ("session_master", "eval_session_master"):
        if key in tf_config and not isinstance(tf_config[key], str):
            raise _tf_config_error(
                f'"{key}"',
                f"expected a string, got {tf_config[key]!r}",
                f'Set "{key}" to an address string or remove it.',
            )
    jobs = _read_cluster(tf_config, check_addresses)
    evaluators = _split_evaluators(jobs)
    if (
        jobs
        and trains_under_strategy
        and tf_config.get("task") is None
        and TaskType.MASTER not in jobs
    ):
        return _ClusterInfo(
            cluster_spec=tf.train.ClusterSpec(jobs), names_task=False, **extras
        )
    if jobs:
        return _cluster_info(tf_config, jobs, extras, evaluators)
    task_type, task_id = _read_task(tf_config, in_cluster=False)
    if (task_type, task_id) != (TaskType.WORKER, 0):
        if task_type != TaskType.WORKER:
            lead = 'If "cluster" is not set in TF_CONFIG, task type must be WORKER.'
        else:
            lead = 'If "cluster" is not set in TF_CONFIG, task index must be 0.'
        raise _tf_config_error(
            '"task"',
            f'without a "cluster", the task must be worker 0, got type '
            f"{task_type!r} index {task_id}",
            'Add the "cluster" this task belongs to, or remove "task".',
            lead=lead,
        )
    return _ClusterInfo(
        cluster_spec=tf.train.ClusterSpec({}),
        master=tf_config.get("session_master", _LOCAL_MASTER),
        evaluation_master=tf_config.get("eval_session_master", _LOCAL_MASTER),
        **extras,
    )
