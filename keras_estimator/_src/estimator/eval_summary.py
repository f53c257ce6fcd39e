"""What `Estimator.evaluate` writes to its eval event file, as 2.15 wrote it.

tf.estimator 2.15 wrote each evaluation result at the evaluated step:
numbers as scalars; bytes that parse as a serialized `Summary` (an image
summary, say) as that summary's values, tagged `<key>/<i>`; numpy arrays as
tensor summaries. Other values (nested tuples, unparsable bytes) were
skipped with a warning. `global_step` itself is not written.

`evaluate()` also logs at INFO what 2.15 logged around an evaluation
("Starting evaluation at ...", "Inference Time : ...", "Finished evaluation
at ...", "Saving dict for global step N: ..."), with numbers in numpy's text
of their dtype, as 2.15 printed its float32 results.

As with 2.15's `FileWriterCache`, a process keeps one event file per eval
directory: every `evaluate()` of every Estimator in the process that writes
to `eval/` (or `eval_<name>/`) appends to the same file, which is closed
between evaluations.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import socket
import struct
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import tensorflow as tf
from google.protobuf import message as _message

logger = logging.getLogger("keras_estimator")

_GLOBAL_STEP_KEY = "global_step"
_LOSS_KEY = "loss"
_CHECKPOINT_PATH_KEY = "checkpoint_path"


def as_result(value: Any, spec: Any = None) -> Any:
    """A metric value as evaluate() returns it: numpy values of the tensor's dtype.

    As tf.estimator 2.15's session run returned them: a scalar as a numpy
    scalar (`np.float32` for a float32 metric or the loss, `np.int32`,
    `np.bool_`), any other shape as an array, a string as `bytes`, nests
    alike. `spec` is the value's `tf.TensorSpec` (nested like it), from the
    evaluation step's trace: Keras hands some values back as Python numbers,
    which are cast back to the tensor's dtype (exactly: a float32 or int
    survives the round trip).
    """
    if tf.nest.is_nested(value):
        if spec is None or not tf.nest.is_nested(spec):
            return tf.nest.map_structure(as_result, value)
        return tf.nest.map_structure(as_result, value, spec)
    if isinstance(value, bytes):
        return value
    dtype = getattr(spec, "dtype", None)
    wanted = None if dtype is None or dtype == tf.string else dtype.as_numpy_dtype
    array = np.asarray(value, dtype=wanted)
    if array.ndim:
        return array
    scalar = array[()]
    return bytes(scalar) if isinstance(scalar, bytes) else scalar


@contextlib.contextmanager
def logged_evaluation() -> Iterator[None]:
    """Logs 2.15's lines around an evaluation run (none when it raises)."""
    logger.info(
        "Starting evaluation at %s", time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())
    )
    start = time.time()
    yield
    logger.info("Inference Time : %.5fs", time.time() - start)
    logger.info(
        "Finished evaluation at %s", time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime())
    )


def log_saved_dict(values: Mapping[str, Any], step: int) -> None:
    """Logs "Saving dict for global step N: k = v, ..." as 2.15 did.

    Keys sorted, bytes values (serialized summaries) left out, and each value
    in numpy's text of its own dtype: a float32 metric prints 0.45184618,
    not the float64 0.451846182346344 evaluate() returns it as.
    """
    if not logger.isEnabledFor(logging.INFO):
        return
    values = dict(values)
    if isinstance(values.get(_LOSS_KEY), float):
        # Keras' evaluate hands the loss back as a Python float; it is the
        # mean of float32 losses (the step casts the loss to float32).
        values[_LOSS_KEY] = np.float32(values[_LOSS_KEY])
    text = ", ".join(
        f"{key} = {numpy_text(values[key])}"
        for key in sorted(values)
        if not isinstance(values[key], bytes)
    )
    logger.info("Saving dict for global step %d: %s", step, text)


def numpy_text(value: Any) -> str:
    """`str` of `value` as numpy prints it in its dtype (a float32 as float32)."""
    if tf.nest.is_nested(value):
        return str(tf.nest.map_structure(numpy_text, value))
    if isinstance(value, (str, bytes)) or value is None:
        return str(value)
    array = np.asarray(value)
    return str(array[()] if array.ndim == 0 else array)


def write_to_directory(
    results: dict[str, Any], step: int, directory: str, checkpoint_path: str | None = None
) -> None:
    """Appends `results` at `step` to the event file this process keeps in `directory`.

    Then, in an event of its own as 2.15 wrote it, the evaluated
    `checkpoint_path` (a string tensor tagged `checkpoint_path`), if given.

    The file is opened for each evaluation and closed after it, so no event
    file stays open between calls, yet a process's evaluations of one
    directory share one file, as 2.15's `FileWriterCache` made them share.

    Raises:
        OSError, tf.errors.OpError: the directory or file cannot be written;
            the next call starts a new file.
    """
    events = [_event(step, summary_proto(results))]
    if checkpoint_path is not None:
        logger.info(
            "Saving 'checkpoint_path' summary for global step %d: %s", step, checkpoint_path
        )
        path_summary = tf.compat.v1.Summary()
        path_summary.value.add(
            tag=_CHECKPOINT_PATH_KEY,
            tensor=tf.make_tensor_proto(checkpoint_path, dtype=tf.string),
        )
        events.append(_event(step, path_summary))
    _EVENT_FILES.append(directory, events)


def summary_proto(results: Mapping[str, Any]) -> Any:
    """The `Summary` 2.15 wrote for an evaluation's results, as one proto.

    Numbers (not numpy bools) as TF1 `simple_value`s; bytes that parse as a
    serialized `Summary` as its values, tagged `<key>/<i>`; numpy arrays as
    tensors. `global_step` and None are left out; other values are skipped
    with a warning, as 2.15 skipped them.
    """
    summary = tf.compat.v1.Summary()
    for key, value in results.items():
        if key == _GLOBAL_STEP_KEY or value is None:
            continue
        if isinstance(value, _NUMBERS):
            summary.value.add(tag=key, simple_value=float(value))
        elif isinstance(value, bytes):
            summary.value.extend(_serialized_summary_values(key, value))
        elif isinstance(value, np.ndarray):
            summary.value.add(tag=key, node_name=key, tensor=tf.make_tensor_proto(value))
            logger.info(
                "Summary for np.ndarray %r is written as a tensor summary, which "
                "TensorBoard does not show by default.",
                key,
            )
        else:
            logger.warning(
                "Skipping summary for %s: it must be a number, a numpy array or a "
                "serialized Summary, got %s.",
                key,
                type(value).__name__,
            )
    return summary


_NUMBERS = (bool, int, float, np.integer, np.floating)


def _serialized_summary_values(key: str, value: bytes) -> list[Any]:
    try:
        summary = tf.compat.v1.Summary.FromString(value)
    except _message.DecodeError:
        logger.warning("Skipping summary for %s: its bytes do not parse as a Summary.", key)
        return []
    for index, entry in enumerate(summary.value):
        entry.tag = f"{key}/{index}"
    return list(summary.value)


def _event(step: int, summary: Any) -> Any:
    return tf.compat.v1.Event(wall_time=time.time(), step=int(step), summary=summary)


class _EventFiles:
    """The event file this process appends to, per eval directory.

    tf.estimator 2.15 took its eval writer from `FileWriterCache`, so a
    process wrote all its evaluations of one directory into one event file,
    and kept it open. Here the file is known by path and appended to, one
    evaluation at a time. Directories are keyed as given (normalized for
    local paths). A file that was deleted, or whose directory was, is
    replaced by a new one (2.15's writer went on writing into the deleted
    file, and the summaries were lost); so is one on a file system that
    cannot append (object stores), each evaluation then writing its own file.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: dict[str, str] = {}

    def append(self, directory: str, events: list[Any]) -> None:
        key = _directory_key(directory)
        records = b"".join(_record(event.SerializeToString()) for event in events)
        with self._lock:
            # Only local files are kept (and appended to).
            path = self._paths.pop(key, None)
            if path is not None and os.path.exists(path):
                with open(path, "ab") as file:
                    file.write(records)
            else:
                path = _new_event_file(directory, records)
            if _is_local(path):
                self._paths[key] = path


_EVENT_FILES = _EventFiles()


def _is_local(path: str) -> bool:
    return "://" not in path


def _directory_key(directory: str) -> str:
    # Remote paths (gs://...) are kept as given: normpath would fold "//".
    return os.path.abspath(directory) if _is_local(directory) else directory


_FILE_COUNTER = itertools.count()


def _new_event_file(directory: str, records: bytes) -> str:
    """Writes a new event file in `directory`: its version record, then `records`."""
    tf.io.gfile.makedirs(directory)
    now = time.time()
    name = (
        f"events.out.tfevents.{int(now):010d}.{socket.gethostname()}"
        f".{os.getpid()}.{next(_FILE_COUNTER)}"
    )
    path = os.path.join(directory, name)
    version = tf.compat.v1.Event(wall_time=now, file_version="brain.Event:2")
    with tf.io.gfile.GFile(path, "wb") as file:
        file.write(_record(version.SerializeToString()) + records)
    return path


def _record(data: bytes) -> bytes:
    """`data` framed as a TFRecord: length, its masked CRC, data, its masked CRC."""
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", _masked_crc(length)) + data + struct.pack(
        "<I", _masked_crc(data)
    )


def _crc32c_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC_TABLE = _crc32c_table()


def _crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), the checksum TFRecord framing uses."""
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked_crc(data: bytes) -> int:
    crc = _crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
