"""One trainer per model_dir: a lock file the chief holds while `train()` runs.

Two trainers writing one model_dir overwrite each other's checkpoints and
interleave their `checkpoint` state files; tf.estimator let that happen
silently. `held` creates `model_dir/.keras_estimator.lock` atomically
(`O_CREAT | O_EXCL`), holding JSON `{"host", "pid", "started", "since",
"token"}`, and removes it when training ends, also when it raises. A second
trainer, in another process or in this one, fails at once with a ValueError
naming the holder. A lock left by a process of this host that is no longer
alive is taken over with a warning; one from another host cannot be checked
and is always respected (the error says how to remove it).

A pid alone does not name a process: after the holder dies its pid can be
given to another process (or, after a reboot, to anything), and the lock
would look live forever. `started` records the holder's start as the kernel
tells it (boot id and start time in clock ticks from `/proc`); a live pid
whose start differs is another process, and its lock is stale. Where `/proc`
is not available, or for locks written without `started`, a live pid is
taken to be the holder.

Covered: model_dirs on a local or mounted file system (what `os.open`
reaches). URLs (`gs://`, `s3://`, `hdfs://`) have no exclusive create
through `tf.io.gfile`, so training there takes no lock. Evaluation and
prediction never take it, and in a cluster only the chief does: its workers
share model_dir by design (they write nothing there).
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any

logger = logging.getLogger("keras_estimator")

LOCK_NAME = ".keras_estimator.lock"
# Taking over a stale lock is itself guarded, so that two trainers finding
# the same stale lock cannot both delete it and both believe they hold it.
_TAKEOVER_SUFFIX = ".takeover"
# A holder creates the file and writes it in the next call; a reader finding
# it empty waits this long for the content before calling it unreadable.
_CONTENT_WAIT_SECS = 1.0


def lock_path(model_dir: str) -> str:
    return os.path.join(model_dir, LOCK_NAME)


def is_local(model_dir: str) -> bool:
    """Whether `model_dir` is a path `os.open` reaches (not a URL)."""
    return "://" not in model_dir


@contextlib.contextmanager
def held(model_dir: str) -> Iterator[None]:
    """Holds model_dir's lock for the duration of the block.

    Raises:
        ValueError: another live trainer holds the lock.
    """
    if not is_local(model_dir):
        logger.debug("model_dir %s is not local: training takes no lock.", model_dir)
        yield
        return
    path = lock_path(model_dir)
    record = _acquire(path)
    try:
        yield
    finally:
        _release(path, record)


def process_start(pid: int) -> str | None:
    """`"<boot id>:<start ticks>"` of process `pid`; None where /proc cannot tell.

    Field 22 of `/proc/<pid>/stat` is the start time in clock ticks since
    boot; the boot id tells boots apart. The command name (field 2) may hold
    spaces and parentheses, so fields are counted after its last ')'.
    """
    try:
        with open("/proc/sys/kernel/random/boot_id") as handle:
            boot_id = handle.read().strip()
        with open(f"/proc/{pid}/stat") as handle:
            stat = handle.read()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    # fields[0] is field 3 (state), so field 22 is fields[19].
    if len(fields) < 20 or not boot_id:
        return None
    return f"{boot_id}:{fields[19]}"


def _acquire(path: str) -> dict[str, Any]:
    record = {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": process_start(os.getpid()),
        "since": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"
        ),
        "token": uuid.uuid4().hex,
    }
    if _create(path, record):
        return record
    holder = _read(path)
    if holder is None:
        # Removed between our attempt and the read: the holder has finished.
        if _create(path, record):
            return record
        holder = _read(path)
    if holder is not None and _is_dead_local(holder):
        _take_over(path, holder, record)
        return record
    raise ValueError(_held_message(path, holder))


def _create(path: str, record: dict[str, Any]) -> bool:
    """Creates `path` holding `record`; False if it already exists."""
    try:
        descriptor = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(descriptor, "w") as handle:
        json.dump(record, handle)
    return True


def _read(path: str) -> dict[str, Any] | None:
    """The holder's record; None if no lock exists; {} if it cannot be read."""
    deadline = time.monotonic() + _CONTENT_WAIT_SECS
    while True:
        try:
            with open(path) as handle:
                text = handle.read()
        except FileNotFoundError:
            return None
        try:
            record = json.loads(text)
        except ValueError:
            record = None
        if isinstance(record, dict):
            return record
        if text or time.monotonic() > deadline:
            return {}
        time.sleep(0.05)


def _is_dead_local(holder: dict[str, Any]) -> bool:
    """Whether `holder` is a process of this host that no longer runs."""
    if holder.get("host") != socket.gethostname() or not isinstance(
        holder.get("pid"), int
    ):
        return False
    return not _pid_alive(holder) or _pid_was_reused(holder)


def _pid_was_reused(holder: dict[str, Any]) -> bool:
    """Whether the live process with the holder's pid started after the holder."""
    recorded = holder.get("started")
    if not isinstance(recorded, str):
        return False  # written without a start time: trust the pid
    current = process_start(holder["pid"])
    return current is not None and current != recorded


def _take_over(path: str, holder: dict[str, Any], record: dict[str, Any]) -> None:
    guard = path + _TAKEOVER_SUFFIX
    if not _create(guard, record):
        other = _read(guard)
        if other is None or not _is_dead_local(other):
            raise ValueError(_held_message(path, other or holder))
        # The guard of a takeover that died half-way.
        _remove_if_unchanged(guard, other)
        if not _create(guard, record):
            raise ValueError(_held_message(path, _read(guard) or holder))
    try:
        # Under the guard no one else deletes or recreates a stale lock; a
        # trainer that starts now finds one and fails, as it should.
        if _read(path) != holder:
            raise ValueError(_held_message(path, _read(path)))
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
        if not _create(path, record):
            raise ValueError(_held_message(path, _read(path)))
    finally:
        _remove_if_unchanged(guard, record)
    logger.warning(
        "Took over the lock %s of a trainer that is no longer running (host %s, "
        "pid %s, since %s%s).",
        path,
        holder.get("host"),
        holder.get("pid"),
        holder.get("since"),
        "; that pid now belongs to another process" if _pid_alive(holder) else "",
    )


def _pid_alive(holder: dict[str, Any]) -> bool:
    """Whether a process with the holder's pid runs on this host (any user's)."""
    pid = holder.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, run by another user
        return True
    return True


def _release(path: str, record: dict[str, Any]) -> None:
    if not _remove_if_unchanged(path, record):
        logger.warning(
            "The lock %s was removed or replaced while this trainer held it; "
            "another trainer may have written to the same model_dir.",
            path,
        )


def _remove_if_unchanged(path: str, record: dict[str, Any]) -> bool:
    """Removes `path` if it still holds `record`; whether it did."""
    if _read(path) != record:
        return False
    try:
        os.remove(path)
    except OSError as error:
        if error.errno != errno.ENOENT:
            raise
        return False
    return True


def _held_message(path: str, holder: dict[str, Any] | None) -> str:
    model_dir = os.path.dirname(path)
    if holder:
        who = (
            f"host {holder.get('host')!r}, pid {holder.get('pid')}, since "
            f"{holder.get('since')}"
        )
    else:
        who = "a trainer whose lock file cannot be read"
    return (
        f"model_dir {model_dir!r} is in use by another trainer ({who}; lock file "
        f"{path}). Two trainers writing one model_dir overwrite each other's "
        "checkpoints. Wait for that training to end, or give this Estimator "
        "another model_dir; if no training runs there any more, delete the "
        "lock file."
    )
