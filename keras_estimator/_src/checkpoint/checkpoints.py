"""model_dir checkpoints in the TF1 name-based format tf.estimator wrote.

Files: `model.ckpt-<global_step>.index` / `.data-00000-of-00001`, keyed by
variable name (`dense/kernel`, `global_step`, ...), and the `checkpoint` state
file listing the kept checkpoints with relative paths. Retention follows the
TF1 Saver: keep the newest `keep_checkpoint_max`; a checkpoint leaving that
window stays on disk (out of the list) if it is at least
`keep_checkpoint_every_n_hours` newer than the last one so preserved.

Crash consistency: a save writes the checkpoint's files, then replaces the
state file atomically, then deletes what retention drops, so a process killed
at any point leaves a state file naming only files that exist (or, killed
mid-deletion, an unlisted remnant). Reads of model_dir go through `latest`,
which rebuilds a state file that cannot be parsed or names missing files from
the checkpoints present, with a warning; a damaged checkpoint is named by path
and never silently replaced by step 0. Only files of this package's own
naming (`model.ckpt-<int>.index`, `model.ckpt-<int>.data-NNNNN-of-MMMMM` and
their leftovers from interrupted saves) are ever deleted.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import errno
import logging
import os
import re
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import numpy as np
import tensorflow as tf

from keras_estimator._src.checkpoint import keras2_optimizer_names, object_checkpoint
from keras_estimator._src.engine.variable_store import CheckpointVariables

logger = logging.getLogger("keras_estimator")

_T = TypeVar("_T")

CHECKPOINT_BASENAME = "model.ckpt"
STATE_FILENAME = "checkpoint"

_NAME = re.compile(r"model\.ckpt-(\d+)")
_SHARD = r"\.data-(\d{5})-of-(\d{5})"
# Leftovers of an interrupted save: SaveV2's `_temp` prefix, and the
# `.tempstate<n>` files TensorFlow writes before renaming into place.
_STALE = re.compile(
    r"model\.ckpt-\d+(_temp(\.index|\.data-\d{5}-of-\d{5})(\.tempstate\d+)?"
    r"|(\.index|\.data-\d{5}-of-\d{5})\.tempstate\d+)"
)
# The directory an object-based Checkpoint's own sharded write uses under
# the temporary prefix, and the files it writes there.
_STALE_DIRECTORY = re.compile(r"model\.ckpt-\d+_temp_temp")
_STALE_PART = re.compile(
    r"part-\d{5}-of-\d{5}(\.index|\.data-\d{5}-of-\d{5})(\.tempstate\d+)?"
)
_GLOB = re.compile(r"[*?\[\]\\]")
_STATE_TEMP = re.compile(r"checkpoint\.tmp-[0-9a-f]{32}")
_STATE_LINE = re.compile(
    r'(model_checkpoint_path|all_model_checkpoint_paths): "((?:[^"\\]|\\.)*)"'
    r"|(all_model_checkpoint_timestamps|last_preserved_timestamp): (\S+)"
)
# Errors of a checkpoint file that exists but cannot be read. NotFoundError
# is left alone: it means the files went away (a newer save deleted them),
# which callers handle as such.
_READ_ERRORS = (tf.errors.OpError, IndexError)


class DamagedCheckpointError(ValueError):
    """A checkpoint whose files exist but cannot be read (truncated, corrupt)."""


def _reached(stage: str) -> None:
    """Called between the stages of a save; a no-op.

    Stages, in order: "temp_written" (SaveV2 done), "files_written" (the
    checkpoint's final files in place), "state_written" (state file
    replaced), "file_deleted" (after each file retention removes). Tests
    replace it to kill the process at a stage.
    """


@dataclasses.dataclass(frozen=True)
class RetentionPolicy:
    """Which checkpoints to keep.

    Attributes:
        max_to_keep: newest checkpoints listed and kept; None or 0 keeps all.
        keep_every_n_hours: additionally keep one checkpoint per this period.
    """

    max_to_keep: int | None = 5
    keep_every_n_hours: float = 10000.0


@dataclasses.dataclass
class _State:
    """The parsed state file: entries oldest first, as written."""

    newest: str
    paths: list[str]
    stamps: list[float]
    last_preserved: float | None


class _UnreadableState(Exception):
    pass


# ---- saving ------------------------------------------------------------------
def save(
    variables: dict[str, tf.Variable],
    model_dir: str,
    global_step: int,
    policy: RetentionPolicy,
    basename: str = CHECKPOINT_BASENAME,
) -> str:
    """Writes `<basename>-<global_step>` (`model.ckpt-...`) and updates the state file.

    Returns:
        The checkpoint's path prefix.
    """
    started = time.time()
    _remove_leftovers(model_dir)
    name = f"{basename}-{global_step}"
    prefix = os.path.join(model_dir, name)
    temp_prefix = prefix + "_temp"
    try:
        if isinstance(variables, CheckpointVariables):
            object_checkpoint.write(variables, temp_prefix)
        else:
            names = sorted(variables)
            tf.raw_ops.SaveV2(
                prefix=temp_prefix,
                tensor_names=names,
                shape_and_slices=[""] * len(names),
                tensors=[current_value(variables[n]) for n in names],
            )
        _reached("temp_written")
        tf.raw_ops.MergeV2Checkpoints(
            checkpoint_prefixes=[temp_prefix],
            destination_prefix=prefix,
            delete_old_dirs=True,
        )
        _reached("files_written")
        dropped = _record(model_dir, name, policy, started)
    except (OSError, tf.errors.OpError) as error:
        if not _is_disk_full(error):
            raise
        raise _disk_full(error, model_dir, name, global_step) from error
    _reached("state_written")
    for old in dropped:
        _delete_checkpoint(model_dir, old)
    # As 2.15's CheckpointSaverHook logged it: the save path without the step.
    logger.info(
        "Saving checkpoints for %d into %s.",
        global_step,
        os.path.join(model_dir, basename),
    )
    return prefix


def current_value(variable: Any) -> Any:
    """`variable`'s value now, read by one op.

    Eagerly, `read_value()` runs an Identity after the read: one op more per
    variable on every save and, on a cold start, the process's first
    Identity kernel to make. A plain tf.Variable is read by `value()` alone
    (the same tensor); a distributed one, or any other kind, by `read_value()`.
    """
    if isinstance(variable, tf.Variable) and not isinstance(
        variable, tf.distribute.DistributedValues
    ):
        return variable.value()
    return variable.read_value()


_DISK_FULL_MESSAGES = ("No space left on device", "Disk quota exceeded")


def _is_disk_full(error: BaseException) -> bool:
    if isinstance(error, tf.errors.ResourceExhaustedError):
        return True
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = error.message if isinstance(error, tf.errors.OpError) else str(error)
    return any(phrase in text for phrase in _DISK_FULL_MESSAGES)


def _disk_full(
    error: BaseException, model_dir: str, name: str, global_step: int
) -> BaseException:
    """The error of a save that did not fit, after removing what it wrote.

    Of the same type as TensorFlow's (ResourceExhaustedError, usually), so
    handlers of it still apply; the message says what remains and the fix.
    """
    try:
        _remove_leftovers(model_dir)
        state = _read_state(model_dir)
        if state is None or os.path.basename(state.newest) != name:
            _delete_checkpoint(model_dir, name)  # complete but never listed
    except (OSError, tf.errors.OpError, _UnreadableState) as cleanup_error:
        logger.warning("Could not remove the files of %s: %s", name, cleanup_error)
    try:
        remaining = latest(model_dir)
    except ValueError:
        remaining = None
    if remaining is None:
        kept = "No checkpoint remains in model_dir"
        lost = f"all {global_step} steps trained are lost"
    else:
        step = _step_in_name(os.path.basename(remaining)) or 0
        kept = f"The latest checkpoint remains {remaining}"
        lost = f"the {global_step - step} steps since it (up to step {global_step}) are lost"
    detail = error.message if isinstance(error, tf.errors.OpError) else str(error)
    message = (
        f"Could not save checkpoint {name} in model_dir {model_dir!r}: the disk is "
        f"full ({detail}). {kept}; {lost}. Free space on that filesystem (or lower "
        "keep_checkpoint_max, or use a model_dir on a larger one) and call train() "
        "again: it resumes from the latest checkpoint."
    )
    if isinstance(error, tf.errors.OpError):
        if type(error) is tf.errors.OpError:
            return tf.errors.OpError(error.node_def, error.op, message, error.error_code)
        return type(error)(error.node_def, error.op, message)
    return OSError(getattr(error, "errno", None) or errno.ENOSPC, message)


def _record(
    model_dir: str, name: str, policy: RetentionPolicy, started: float
) -> list[str]:
    """Lists `name` as the newest checkpoint; returns the names to delete.

    `started` is when this save began: a new state file's preservation clock
    starts just before it (see `_orphans`).
    """
    files = _listdir(model_dir)
    try:
        state = _read_state(model_dir)
    except _UnreadableState as error:
        _warn(f"{_state_path(model_dir)} could not be read ({error}); it is rewritten "
              f"to list {name} only.")
        state = None
    now = time.time()
    paths: list[str] = []
    stamps: list[float] = []
    # A second of margin: file times come from a coarser clock than time.time().
    last_preserved = started - 1.0
    if state is not None:
        for entry, stamp in zip(state.paths, state.stamps, strict=True):
            local = _local_name(model_dir, entry)
            # Entries whose files are gone are not carried over, so the state
            # file names only checkpoints that exist.
            if local is not None and local != name and _complete(files, local):
                paths.append(local)
                stamps.append(stamp)
        if state.last_preserved is not None:
            last_preserved = state.last_preserved
    paths.append(name)
    stamps.append(now)
    dropped = []
    if policy.max_to_keep:
        while len(paths) > policy.max_to_keep:
            old, stamp = paths.pop(0), stamps.pop(0)
            if stamp - last_preserved >= policy.keep_every_n_hours * 3600:
                last_preserved = stamp
                continue
            dropped.append(old)
        dropped += _orphans(model_dir, files, paths, dropped, last_preserved)
    _write_state(model_dir, paths, stamps, last_preserved)
    return dropped


def _orphans(
    model_dir: str,
    files: set[str],
    kept: list[str],
    dropped: list[str],
    last_preserved: float,
) -> list[str]:
    """Checkpoints an earlier save dropped but was killed before deleting.

    Such a checkpoint is complete, unlisted, and older than the oldest one
    kept. A checkpoint preserved by `keep_every_n_hours` is too, but its
    files were written no later than `last_preserved` (the time recorded for
    the newest preserved one, or the start of the first save): only those
    written after it are taken for orphans. Exact names of this package's
    own `model.ckpt-<step>` files only.
    """
    oldest = min((s for s in map(_step_in_name, kept) if s is not None), default=None)
    if oldest is None:
        return []
    orphans = []
    for step in sorted(_steps_present(files)):
        name = f"{CHECKPOINT_BASENAME}-{step}"
        if step >= oldest or name in kept or name in dropped or not _complete(files, name):
            continue
        try:
            written = _mtime(os.path.join(model_dir, name + ".index"))
        except tf.errors.NotFoundError:
            continue
        if written > last_preserved:
            logger.info("Removing %s, dropped by an interrupted save.", name)
            orphans.append(name)
    return orphans


def _write_state(
    model_dir: str, paths: list[str], stamps: list[float], last_preserved: float
) -> None:
    """Writes the `checkpoint` state file (text proto), replacing it atomically."""
    lines = [f'model_checkpoint_path: "{paths[-1]}"']
    lines += [f'all_model_checkpoint_paths: "{p}"' for p in paths]
    lines += [f"all_model_checkpoint_timestamps: {s!r}" for s in stamps]
    lines.append(f"last_preserved_timestamp: {last_preserved!r}")
    target = _state_path(model_dir)
    # A name of its own per write: a reader repairing the file never writes
    # into the temp file of a save running at the same time.
    temp = os.path.join(model_dir, f"checkpoint.tmp-{uuid.uuid4().hex}")
    with tf.io.gfile.GFile(temp, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    tf.io.gfile.rename(temp, target, overwrite=True)


def _delete_checkpoint(model_dir: str, name: str) -> None:
    """Removes `name`'s index and data files: exact names, never a pattern."""
    if not _NAME.fullmatch(name):
        return
    shard = re.compile(re.escape(name) + _SHARD)
    files = _listdir(model_dir)
    # The index first: a checkpoint without it is no longer one, whatever a
    # kill in between leaves of its data.
    doomed = [f for f in files if f == name + ".index"]
    doomed += sorted(f for f in files if shard.fullmatch(f))
    for file in doomed:
        tf.io.gfile.remove(os.path.join(model_dir, file))
        _reached("file_deleted")


def _remove_leftovers(model_dir: str) -> None:
    """Removes what interrupted saves left: temp files and index-less data."""
    files = _listdir(model_dir)
    for file in sorted(files):
        path = os.path.join(model_dir, file)
        if _is_leftover(file, files):
            logger.info("Removing %s, left by an interrupted save.", file)
            tf.io.gfile.remove(path)
        elif _STALE_DIRECTORY.fullmatch(file) and tf.io.gfile.isdir(path):
            logger.info("Removing %s, left by an interrupted save.", file)
            parts = _listdir(path)
            for part in sorted(parts):
                if _STALE_PART.fullmatch(part):
                    tf.io.gfile.remove(os.path.join(path, part))
            if not _listdir(path):
                tf.io.gfile.rmtree(path)


def _is_leftover(file: str, files: set[str]) -> bool:
    if _STALE.fullmatch(file) or _STATE_TEMP.fullmatch(file):
        return True
    # Data of a checkpoint whose index is gone: a deletion was cut short.
    match = re.fullmatch(r"(model\.ckpt-\d+)" + _SHARD, file)
    return match is not None and match.group(1) + ".index" not in files


# ---- reading model_dir -------------------------------------------------------
def checkpoint_path_argument(value: Any, name: str = "checkpoint_path") -> str | None:
    """A `checkpoint_path` argument as a str (None stays None).

    Takes what tf.estimator 2.15 took (str, bytes) and path objects.

    Raises:
        TypeError: `value` is of another type (2.15's type and first phrase).
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bytes, os.PathLike)):
        path = os.fspath(value)
        return path.decode("utf-8") if isinstance(path, bytes) else path
    raise TypeError(
        f"Expected binary or unicode string, got {value!r} ({type(value).__name__}) "
        f"as {name}. Pass the checkpoint's path prefix as a str, such as "
        "'<model_dir>/model.ckpt-100', or None for the latest checkpoint."
    )


def require_checkpoint(path: str | None, name: str = "checkpoint_path") -> str | None:
    """`path` (a `checkpoint_path_argument` result), if a checkpoint is there.

    None and an empty path (the latest checkpoint) and directories pass as
    given.

    Raises:
        ValueError: nothing is at the path (tf.estimator 2.15's Saver's first
            phrase), naming the path and the fix.
    """
    if path and not (tf.io.gfile.exists(f"{path}.index") or tf.io.gfile.exists(path)):
        raise ValueError(
            f"The passed save_path is not a valid checkpoint: {path} ({name} "
            f"{path!r} has no {path}.index). Pass a checkpoint prefix such as "
            "<model_dir>/model.ckpt-100, or None for the latest checkpoint."
        )
    return path


def latest(model_dir: str, rewrite_state: bool = True) -> str | None:
    """The newest checkpoint prefix in `model_dir`, or None if it has none.

    A state file that cannot be parsed, names files that are missing, or is
    missing while checkpoints exist is rebuilt from the `model.ckpt-<step>`
    checkpoints present (the newest that can be read), with a warning saying
    what was repaired and how many steps that loses. Files are looked up by
    exact name, never by pattern (TensorFlow's `latest_checkpoint` globs, so
    it finds nothing in a directory named like `run[1]`).

    Args:
        model_dir: the directory.
        rewrite_state: write the rebuilt state file back. False for
            directories this process only reads (a warm start's source).

    Raises:
        ValueError: checkpoint files exist but none of them can be read, or
            model_dir is a file.
    """
    if tf.io.gfile.exists(model_dir) and not tf.io.gfile.isdir(model_dir):
        raise ValueError(
            f"model_dir {model_dir!r} is a file, not a directory. Pass a directory "
            "(new or holding this model's checkpoints) as model_dir."
        )
    path = _state_path(model_dir)
    raw = _read_bytes(path)
    attempts = 1
    while True:
        found, state, problem = _check_state(model_dir, raw, _listdir(model_dir))
        if problem is None:
            return found
        # A save that replaced the state file and deleted old checkpoints
        # while this ran looks like missing files: judge only a stable file.
        reread = _read_bytes(path)
        if reread == raw or attempts == 3:
            return _repair(model_dir, state, problem, raw, rewrite_state)
        raw, attempts = reread, attempts + 1


def _check_state(
    model_dir: str, raw: bytes | None, files: set[str]
) -> tuple[str | None, _State | None, str | None]:
    """(newest checkpoint, parsed state, None) or (None, state, what is wrong)."""
    if raw is None:
        if not _steps_present(files):
            return None, None, None
        return None, None, "it is missing"
    try:
        state = _parse_state(raw)
    except _UnreadableState as error:
        return None, None, f"it cannot be parsed ({error})"
    local = _local_name(model_dir, state.newest)
    if local is not None and _complete(files, local):
        return os.path.join(model_dir, local), state, None
    return None, state, f"it names {state.newest!r}, whose files are not in model_dir"


def _repair(
    model_dir: str,
    state: _State | None,
    problem: str,
    raw: bytes | None,
    rewrite_state: bool = True,
) -> str | None:
    """Rebuilds the state file from the checkpoints present; returns the newest."""
    files = _listdir(model_dir)
    found = _steps_present(files)
    path = _state_path(model_dir)
    if not found:
        _warn(f"{path} is ignored: {problem}, and model_dir has no checkpoint.")
        return None
    chosen, damaged = _newest_readable(model_dir, found)
    if chosen is None:
        listing = "; ".join(f"{os.path.join(model_dir, n)} ({why})" for n, why in damaged)
        raise ValueError(
            f"model_dir {model_dir!r} holds checkpoints but none can be read: "
            f"{listing}. Move these files out of model_dir (or delete them) to "
            "start training afresh, or point model_dir elsewhere."
        )
    paths, stamps = [], []
    if state is not None:
        for entry, stamp in zip(state.paths, state.stamps, strict=True):
            local = _local_name(model_dir, entry)
            if local and local != chosen and _complete(files, local) and (
                local not in dict(damaged)
            ):
                paths.append(local)
                stamps.append(stamp)
    paths.append(chosen)
    stamps.append(_mtime(os.path.join(model_dir, chosen + ".index")))
    message = (
        f"Repaired {path}: {problem}. It now names {chosen}"
        if rewrite_state
        else f"Not using {path}: {problem}. Reading {chosen}"
    )
    lost = _steps_lost(state, chosen)
    message += f", losing {lost} steps." if lost else "."
    if damaged:
        message += " Unreadable: " + "; ".join(f"{n} ({why})" for n, why in damaged) + "."
    _warn(message)
    if rewrite_state and _read_bytes(path) == raw:
        preserved = state.last_preserved if state and state.last_preserved else time.time()
        try:
            _write_state(model_dir, paths, stamps, preserved)
        except (OSError, tf.errors.OpError) as error:
            logger.warning("Could not rewrite %s (%s); using %s.", path, error, chosen)
    return os.path.join(model_dir, chosen)


def _newest_readable(
    model_dir: str, steps: list[int]
) -> tuple[str | None, list[tuple[str, str]]]:
    """The newest of `steps`' checkpoints that reads, and those that did not."""
    files = _listdir(model_dir)
    damaged = []
    for step in steps:
        name = f"{CHECKPOINT_BASENAME}-{step}"
        if not _complete(files, name):
            damaged.append((name, "data files missing"))
            continue
        problem = _read_problem(os.path.join(model_dir, name))
        if problem is None:
            return name, damaged
        damaged.append((name, problem))
    return None, damaged


def _steps_lost(state: _State | None, chosen: str) -> int:
    """Steps between the checkpoint the state file named and `chosen`."""
    if state is None:
        return 0
    named, kept = _step_in_name(os.path.basename(state.newest)), _step_in_name(chosen)
    return max(0, named - kept) if named is not None and kept is not None else 0


def _step_in_name(name: str) -> int | None:
    match = _NAME.fullmatch(name)
    return int(match.group(1)) if match else None


def _read_state(model_dir: str) -> _State | None:
    raw = _read_bytes(_state_path(model_dir))
    return None if raw is None else _parse_state(raw)


def _parse_state(raw: bytes) -> _State:
    """Parses the state file's text proto; raises _UnreadableState."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _UnreadableState("not UTF-8 text") from None
    newest = None
    paths: list[str] = []
    stamps: list[float] = []
    last_preserved = None
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = _STATE_LINE.fullmatch(line)
        if match is None:
            raise _UnreadableState(f"line {number} is {line[:60]!r}")
        key = match.group(1) or match.group(3)
        try:
            if key == "model_checkpoint_path":
                newest = _unquote(match.group(2))
            elif key == "all_model_checkpoint_paths":
                paths.append(_unquote(match.group(2)))
            elif key == "all_model_checkpoint_timestamps":
                stamps.append(float(match.group(4)))
            else:
                last_preserved = float(match.group(4))
        except (ValueError, SyntaxError, UnicodeDecodeError):
            raise _UnreadableState(f"line {number} is {line[:60]!r}") from None
    if not newest:
        raise _UnreadableState("no model_checkpoint_path")
    if not paths:
        paths = [newest]
    if len(stamps) != len(paths):
        # TF1 Savers wrote no timestamps: the entries count as new.
        stamps = [time.time()] * len(paths)
    return _State(newest, paths, stamps, last_preserved)


def _unquote(quoted: str) -> str:
    """A text-proto string's value (C escapes, UTF-8 bytes)."""
    if "\\" not in quoted:
        return quoted
    return ast.literal_eval('b"' + quoted + '"').decode("utf-8")


def _local_name(model_dir: str, entry: str) -> str | None:
    """The file name of a state entry inside model_dir, or None if outside."""
    directory, name = os.path.split(entry)
    if directory and "://" not in directory and not os.path.isabs(directory):
        directory = os.path.join(model_dir, directory)
    if directory and _normalized(directory) != _normalized(model_dir):
        return None
    return name or None


def identity(checkpoint_path: str | None) -> tuple[Any, ...] | None:
    """What tells a checkpoint's files from others saved under the same prefix.

    The prefix with its index file's size and modification time (and, on a
    local disk, inode): a model_dir emptied and trained again to the same
    step writes another `model.ckpt-<step>` under the old name. Take it
    before reading the files, so that files replaced while they are read
    differ from what was read. None for None or an index that is not there.
    """
    if checkpoint_path is None:
        return None
    index = checkpoint_path + ".index"
    try:
        if "://" in checkpoint_path:
            stat = tf.io.gfile.stat(index)
            return (checkpoint_path, stat.length, stat.mtime_nsec)
        local = os.stat(index)
    except (OSError, tf.errors.NotFoundError):
        return None
    return (checkpoint_path, local.st_size, local.st_mtime_ns, local.st_ino, local.st_dev)


def _normalized(path: str) -> str:
    return path.rstrip("/") if "://" in path else os.path.normpath(os.path.abspath(path))


def _complete(files: set[str], name: str) -> bool:
    """Whether `name`'s index and every data shard are among `files`."""
    if name + ".index" not in files:
        return False
    shard = re.compile(re.escape(name) + _SHARD)
    counts = [m.group(2) for f in files if (m := shard.fullmatch(f))]
    return bool(counts) and all(
        f"{name}.data-{i:05d}-of-{total}" in files
        for total in set(counts)
        for i in range(int(total))
    )


def _steps_present(files: set[str]) -> list[int]:
    """Steps of the `model.ckpt-<step>.index` files, newest first."""
    steps = [
        int(m.group(1)) for f in files if (m := re.fullmatch(r"model\.ckpt-(\d+)\.index", f))
    ]
    return sorted(steps, reverse=True)


def _read_problem(prefix: str) -> str | None:
    """Why the checkpoint at `prefix` cannot be read in full, or None."""
    try:
        with _reading(prefix) as reader:
            for name in reader.get_variable_to_shape_map():
                reader.get_tensor(name)
    except tf.errors.NotFoundError as error:
        return f"missing: {error.message}"
    except DamagedCheckpointError as error:
        return _describe(error.__cause__) if error.__cause__ else str(error)
    return None


def _describe(error: BaseException) -> str:
    message = error.message if isinstance(error, tf.errors.OpError) else str(error)
    return f"{type(error).__name__}: {message}"


def _state_path(model_dir: str) -> str:
    return os.path.join(model_dir, STATE_FILENAME)


def _read_bytes(path: str) -> bytes | None:
    try:
        with tf.io.gfile.GFile(path, "rb") as handle:
            return handle.read()
    except tf.errors.NotFoundError:
        return None


def _listdir(model_dir: str) -> set[str]:
    try:
        return {f.rstrip("/") for f in tf.io.gfile.listdir(model_dir)}
    except tf.errors.NotFoundError:
        return set()


def _mtime(path: str) -> float:
    return tf.io.gfile.stat(path).mtime_nsec / 1e9


def _warn(message: str) -> None:
    logger.warning("%s", message)
    warnings.warn(message, stacklevel=3)


# ---- reading a checkpoint ----------------------------------------------------
@contextlib.contextmanager
def _reading(checkpoint_path: str) -> Iterator[Any]:
    """A reader of the checkpoint; read errors become DamagedCheckpointError.

    TensorFlow's reader looks for `<prefix>.index` with a glob, so in a
    directory named like `run[1]` it finds another directory's files, or
    none. Such a checkpoint is read as `/proc/self/fd/<fd>/<name>` through an
    open descriptor of its directory (Linux), a path without glob characters.
    NotFoundError passes unchanged: the files went away, as when a newer save
    deleted them.
    """
    directory, name = os.path.split(checkpoint_path)
    descriptor = None
    path = checkpoint_path
    if _GLOB.search(directory) and "://" not in directory and os.path.isdir("/proc/self/fd"):
        descriptor = os.open(directory, os.O_RDONLY)
        path = f"/proc/self/fd/{descriptor}/{name}"
    try:
        yield tf.train.load_checkpoint(path)
    except tf.errors.NotFoundError:
        raise
    except _READ_ERRORS as error:
        if not _complete(_listdir(directory or "."), name):
            # Deleted while read (a data file gone after its index was read
            # fails as FailedPrecondition): gone, not damaged.
            raise tf.errors.NotFoundError(
                None, None, f"Checkpoint {checkpoint_path} was deleted while it was read."
            ) from error
        raise DamagedCheckpointError(
            f"Checkpoint {checkpoint_path} is damaged and cannot be read "
            f"({_describe(error)}); its files are {checkpoint_path}.index and "
            f"{checkpoint_path}.data-*. Move them out of the model_dir to use the "
            "previous checkpoint, or restore them from a copy."
        ) from error
    finally:
        if descriptor is not None:
            os.close(descriptor)


@contextlib.contextmanager
def open_reader(checkpoint_path: str) -> Iterator[Any]:
    """TensorFlow's reader of the checkpoint at `checkpoint_path`, by exact name.

    For readers of any directory (warm starts, exports, inspection):
    `tf.train.load_checkpoint` finds no file in a directory named like
    `run[1]`. The reader is valid inside the `with` block only.

    Raises:
        DamagedCheckpointError: the files exist but cannot be read.
        tf.errors.NotFoundError: the files are not there.
    """
    with _reading(checkpoint_path) as reader:
        yield reader


def step_of(checkpoint_path: str) -> int:
    """The global step stored in a checkpoint (0 when it holds none).

    An object-based checkpoint whose Checkpoint did not track the global step
    has it in its name (`model.ckpt-<step>`).
    """
    with _reading(checkpoint_path) as reader:
        keys = reader.get_variable_to_shape_map()
        names = object_checkpoint.stored_names(reader, keys)
        if "global_step" in names:
            return int(reader.get_tensor(names["global_step"]))
    if object_checkpoint.is_object_based(keys):
        return _step_in_name(os.path.basename(checkpoint_path)) or 0
    return 0


def restore(
    variables: dict[str, tf.Variable],
    checkpoint_path: str,
    *,
    strict: bool = True,
    scaffold_checkpoint: Any = None,
    renamed: Mapping[str, str] | None = None,
) -> list[str]:
    """Assigns each variable the value stored under its name.

    Every value is read (and checksummed) before any variable changes, so a
    damaged checkpoint leaves the variables as they were. An object-based
    checkpoint is read through `scaffold_checkpoint`'s paths to its variables
    (`model/dense/kernel`), as 2.15's Scaffold saver read it, and through the
    names its object graph records for the variables those paths miss (or
    all, without a Checkpoint); variables it does not hold keep their
    values, with a warning (its Checkpoint did not track them), and the
    global step is then taken from its name.

    Args:
        variables: name -> variable.
        checkpoint_path: a checkpoint prefix.
        strict: if True, a variable missing from the checkpoint is an error
            (as a TF1 Saver made it); if False it keeps its value.
        scaffold_checkpoint: the `tf.train.Checkpoint` the model_fn gave as
            its Scaffold's saver in the mode restoring, or None.
        renamed: variable name -> the key it is read from instead of its
            name (a model_fn's Scaffold `tf.compat.v1.train.Saver` with a
            var_list dict, as 2.15 restored through it).

    Returns:
        The names that were restored.

    Raises:
        ValueError: a variable is missing (strict) or has another shape or
            dtype.
        DamagedCheckpointError: the checkpoint's files cannot be read.
    """
    with _reading(checkpoint_path) as reader:
        shapes = reader.get_variable_to_shape_map()
        dtypes = reader.get_variable_to_dtype_map()
        keys = object_checkpoint.stored_names(reader, shapes)
        object_based = object_checkpoint.is_object_based(shapes)
        if object_based and scaffold_checkpoint is not None:
            keys.update(
                object_checkpoint.keys_by_object_path(
                    reader, shapes, scaffold_checkpoint, variables
                )
            )
        for name, key in (renamed or {}).items():
            if name not in variables:
                continue
            if key not in shapes:
                # 2.15's Saver's NotFoundError, with what is there.
                raise ValueError(
                    f"Key {key} not found in checkpoint {checkpoint_path}: the "
                    f"Scaffold's Saver reads variable {name!r} from it. The "
                    f"checkpoint holds {sorted(shapes)}; give the Saver's "
                    "var_list a key the checkpoint has."
                )
            keys[name] = key
        missing = [n for n in variables if n not in keys]
        if missing:
            # A tf.keras 2 optimizer's variables, written by tf.estimator
            # (object-based by 2.15's model_to_estimator: by their saved names).
            aliases = keras2_optimizer_names.aliases(missing, keys)
            keys.update({name: keys[alias] for name, alias in aliases.items()})
            missing = [n for n in variables if n not in keys]
        if missing and strict and not object_based:
            raise ValueError(
                f"Checkpoint {checkpoint_path} has no value for variables {missing} "
                f"that model_fn creates. It holds {sorted(shapes)}. The model_fn "
                "must create the variables (with the same names) that wrote this "
                "checkpoint, or use a new model_dir / warm_start_from."
            )
        values = {}
        for name, variable in variables.items():
            if name in keys:
                key = keys[name]
                _check_matches(name, variable, shapes[key], dtypes[key], checkpoint_path)
                values[name] = reader.get_tensor(key)
    step = _step_in_name(os.path.basename(checkpoint_path))
    if object_based and "global_step" in missing and step is not None:
        values["global_step"] = np.asarray(step, np.int64)
        missing.remove("global_step")
    if object_based and missing and strict:
        logger.warning(
            "Object-based checkpoint %s holds no value for %s: they keep their "
            "values. Track the objects that own them in the Scaffold's "
            "tf.train.Checkpoint to save and restore them.",
            checkpoint_path,
            missing,
        )
    for name, value in values.items():
        variables[name].assign(value)
    return list(values)


def _check_matches(
    name: str,
    variable: tf.Variable,
    stored_shape: list[int],
    stored_dtype: tf.DType,
    checkpoint_path: str,
) -> None:
    if not variable.shape.is_compatible_with(stored_shape):
        raise ValueError(
            f"Variable {name!r} has shape {tuple(variable.shape)} in model_fn "
            f"but shape {tuple(stored_shape)} in checkpoint {checkpoint_path}. Use a "
            "model_dir written by this model, or change the model back."
        )
    if stored_dtype.base_dtype != variable.dtype.base_dtype:
        raise ValueError(
            f"Variable {name!r} has dtype {variable.dtype.name} in model_fn but "
            f"dtype {stored_dtype.name} in checkpoint {checkpoint_path}. Create "
            f"it as {stored_dtype.name} in model_fn, or use a new model_dir "
            "(warm_start_from can start it from this checkpoint's values)."
        )


# How many checkpoints a reader tries, newest first, when each in turn is
# deleted by a trainer's retention before it is read.
READ_ATTEMPTS = 5


def reading_newest(
    model_dir: str, read: Callable[[str], _T], chosen: str | None = None
) -> _T:
    """`read(path)` of the newest checkpoint, again of the then-newest if it vanished.

    A trainer saving into model_dir deletes the oldest checkpoint at every
    save (`keep_checkpoint_max`): the one a reader chose can be gone before it
    is read (TensorFlow's NotFoundError). The reader then takes the newest
    checkpoint the state file names, which only ever names complete ones,
    at most `READ_ATTEMPTS` times.

    Args:
        model_dir: the directory the checkpoints are in.
        read: reads a checkpoint prefix; raises NotFoundError if its files
            are gone. It must change nothing before it has read everything
            (as `restore` does), since it may be called again.
        chosen: the checkpoint to read first; None for the newest.

    Raises:
        ValueError: model_dir has no checkpoint, or every one tried vanished.
    """
    path = chosen if chosen is not None else latest(model_dir)
    vanished: list[str] = []
    for _ in range(READ_ATTEMPTS):
        if path is None:
            break
        try:
            return read(path)
        except tf.errors.NotFoundError:
            if _complete(_listdir(os.path.dirname(path) or "."), os.path.basename(path)):
                raise  # the checkpoint is there: something else is missing
            vanished.append(path)
            newest = latest(model_dir)
            logger.info(
                "Checkpoint %s was deleted before it could be read (a trainer's "
                "retention); reading %s instead.",
                path,
                newest,
            )
            path = newest
    if not vanished:
        raise ValueError(
            f"model_dir {model_dir!r} holds no checkpoint to read. Train the "
            "Estimator first, or pass checkpoint_path=<checkpoint prefix>."
        )
    raise ValueError(
        f"Could not read a checkpoint of model_dir {model_dir!r}: "
        f"{', '.join(os.path.basename(p) for p in vanished)} were deleted one after "
        "the other before they could be read, by a trainer whose retention "
        "(keep_checkpoint_max) prunes faster than this reader reads. Raise "
        "keep_checkpoint_max, or read a copy of the checkpoint."
    )


def restore_or_fall_back(
    variables: dict[str, tf.Variable],
    model_dir: str,
    checkpoint_path: str,
    *,
    scaffold_checkpoint: Any = None,
) -> str:
    """Restores `checkpoint_path` or, if it is damaged, the newest older one.

    Falling back warns, saying how many steps that loses.
    `scaffold_checkpoint` is `restore`'s.

    Returns:
        The checkpoint prefix restored.

    Raises:
        DamagedCheckpointError: it is damaged and no older one reads.
    """
    try:
        restore(variables, checkpoint_path, scaffold_checkpoint=scaffold_checkpoint)
        return checkpoint_path
    except DamagedCheckpointError as damage:
        step = _step_in_name(os.path.basename(checkpoint_path))
        if step is None:
            raise
        older = [s for s in _steps_present(_listdir(model_dir)) if s < step]
        chosen, _ = _newest_readable(model_dir, older)
        if chosen is None:
            raise DamagedCheckpointError(
                f"{damage} No older checkpoint in {model_dir} can be read either."
            ) from None
        lost = step - (_step_in_name(chosen) or 0)
        _warn(f"{damage} Training continues from {chosen}, losing {lost} steps.")
        fallback = os.path.join(model_dir, chosen)
        restore(variables, fallback, scaffold_checkpoint=scaffold_checkpoint)
        return fallback


def variable_names(checkpoint_path: str) -> list[str]:
    with _reading(checkpoint_path) as reader:
        return sorted(reader.get_variable_to_shape_map())


def variable_value(checkpoint_path: str, name: str) -> np.ndarray:
    with _reading(checkpoint_path) as reader:
        keys = reader.get_variable_to_shape_map()
        stored = object_checkpoint.stored_names(reader, keys)
        if name in stored:
            return reader.get_tensor(stored[name])
        names = sorted(keys)
    if name == "global_step" and object_checkpoint.is_object_based(keys):
        return np.asarray(step_of(checkpoint_path), np.int64)
    raise ValueError(
        f"Checkpoint {checkpoint_path} has no variable {name!r}; it has {names}."
    )
