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

As 2.15's `FileWriterCache` did, a process keeps one event file open per
eval directory: every `evaluate()` of every Estimator in the process that
writes to `eval/` (or `eval_<name>/`) appends to the same file.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import tensorflow as tf
from google.protobuf import message as _message

from keras_estimator._src.tf_internals import summary_writers

logger = logging.getLogger("keras_estimator")

_GLOBAL_STEP_KEY = "global_step"
_LOSS_KEY = "loss"


def to_python(value: Any) -> Any:
    """A metric value as evaluate() returns it: Python scalars, arrays, nests."""
    if tf.nest.is_nested(value):
        return tf.nest.map_structure(to_python, value)
    array = np.asarray(value)
    return array.item() if array.ndim == 0 else array


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


def write_to_directory(results: dict[str, Any], step: int, directory: str) -> None:
    """Writes `results` at `step` to the event file this process keeps in `directory`.

    Raises:
        OSError, tf.errors.OpError: the directory or file cannot be written;
            the next call starts a new file.
    """
    writer = _WRITERS.writer(directory)
    try:
        write(results, step, writer)
        writer.flush()
    except (OSError, tf.errors.OpError):
        _WRITERS.forget(directory)
        raise


class _EvalWriters:
    """One open `tf.summary` file writer per eval directory, for the process.

    tf.estimator 2.15 took its eval writer from `FileWriterCache`, so a
    process wrote all its evaluations of one directory into one event file.
    Writers are kept by directory (as given, normalized for local paths); at
    most `capacity` stay open, the least recently used being closed first (a
    directory evaluated again after that starts a new file). A writer whose
    file was deleted, or whose directory was, is replaced by a new one: 2.15's
    writer went on writing into the deleted file and the summaries were lost.
    """

    def __init__(self, capacity: int = 32) -> None:
        self._capacity = capacity
        self._lock = threading.Lock()
        # directory -> (writer, path of its event file or None if unknown).
        self._open: collections.OrderedDict[str, tuple[Any, str | None]] = (
            collections.OrderedDict()
        )

    def writer(self, directory: str) -> Any:
        key = _directory_key(directory)
        with self._lock:
            entry = self._open.get(key)
            if entry is not None and _still_there(directory, entry[1]):
                self._open.move_to_end(key)
                return entry[0]
            if entry is not None:
                self._close(key)
            writer, path = _new_writer(directory)
            self._open[key] = (writer, path)
            while len(self._open) > self._capacity:
                self._close(next(iter(self._open)))
            return writer

    def forget(self, directory: str) -> None:
        with self._lock:
            key = _directory_key(directory)
            if key in self._open:
                self._close(key)

    def _close(self, key: str) -> None:
        writer, _ = self._open.pop(key)
        try:
            writer.close()
        except (OSError, tf.errors.OpError):
            pass  # Its directory is gone: nothing left to flush into.


_WRITERS = _EvalWriters()


def _directory_key(directory: str) -> str:
    # Remote paths (gs://...) are kept as given: normpath would fold "//".
    return directory if "://" in directory else os.path.abspath(directory)


def _new_writer(directory: str) -> tuple[Any, str | None]:
    """A new file writer in `directory`, and the path of its event file if known."""
    before = set(tf.io.gfile.glob(os.path.join(directory, "events.out.tfevents.*")))
    with tf.init_scope():
        writer = tf.summary.create_file_writer(directory)
    created = set(tf.io.gfile.glob(os.path.join(directory, "events.out.tfevents.*")))
    new = sorted(created - before)
    # Another process may have created a file at the same moment: then the
    # file is not known, and only the directory's existence is checked.
    return writer, (new[0] if len(new) == 1 else None)


def _still_there(directory: str, path: str | None) -> bool:
    return tf.io.gfile.exists(path if path is not None else directory)


def write(results: dict[str, Any], step: int, writer: Any) -> None:
    """Writes `results` at `step` through the `tf.summary` file writer `writer`.

    The numbers go in one event, as tf.estimator 2.15 wrote them in one,
    each as a TF1 `simple_value`. Built here and written by one op: through
    `tf.summary.scalar`, each number cost as much as the rest of a small
    model's evaluation step.
    """
    scalars = tf.compat.v1.Summary()
    others = False
    for key, value in results.items():
        if key == _GLOBAL_STEP_KEY or value is None:
            continue
        if isinstance(value, _NUMBERS):
            scalars.value.append(_scalar_value(key, value))
        else:
            others = True
    if scalars.value:
        summary_writers.write_summary_proto(writer, scalars.SerializeToString(), step)
    if others:
        with writer.as_default():
            _write_others(results, step)


_NUMBERS = (bool, int, float, np.number, np.bool_)


def _scalar_value(key: str, value: Any) -> Any:
    """The summary value 2.15 wrote for a number: a TF1 `simple_value`.

    Readers of 2.15's eval files (`summary_iterator` loops over
    `value.simple_value`, `EventAccumulator.Scalars`) find it there;
    TensorBoard's scalars plugin shows it as it shows `tf.summary.scalar`'s.
    """
    return tf.compat.v1.Summary.Value(tag=key, simple_value=float(value))


def _write_others(results: dict[str, Any], step: int) -> None:
    """Writes what is not a number to the default summary writer at `step`."""
    for key, value in results.items():
        if key == _GLOBAL_STEP_KEY or value is None or isinstance(value, _NUMBERS):
            continue
        if isinstance(value, bytes):
            _write_serialized_summary(key, value, step)
        elif isinstance(value, np.ndarray):
            tf.summary.write(key, tf.constant(value), step=step)
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


def _write_serialized_summary(key: str, value: bytes, step: int) -> None:
    try:
        summary = tf.compat.v1.Summary.FromString(value)
    except _message.DecodeError:
        logger.warning(
            "Skipping summary for %s: its bytes do not parse as a Summary.", key
        )
        return
    for index, entry in enumerate(summary.value):
        entry.tag = f"{key}/{index}"
    tf.summary.experimental.write_raw_pb(
        tf.constant(summary.SerializeToString()), step=step
    )
