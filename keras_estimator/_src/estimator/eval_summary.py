"""What `Estimator.evaluate` writes to its eval event file, as 2.15 wrote it.

tf.estimator 2.15 wrote each evaluation result at the evaluated step:
numbers as scalars; bytes that parse as a serialized `Summary` (an image
summary, say) as that summary's values, tagged `<key>/<i>`; numpy arrays as
tensor summaries. Other values (nested tuples, unparsable bytes) were
skipped with a warning. `global_step` itself is not written.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import tensorflow as tf
from google.protobuf import message as _message

logger = logging.getLogger("keras_estimator")

_GLOBAL_STEP_KEY = "global_step"


def to_python(value: Any) -> Any:
    """A metric value as evaluate() returns it: Python scalars, arrays, nests."""
    if tf.nest.is_nested(value):
        return tf.nest.map_structure(to_python, value)
    array = np.asarray(value)
    return array.item() if array.ndim == 0 else array


def write(results: dict[str, Any], step: int) -> None:
    """Writes `results` to the default summary writer at `step`."""
    for key, value in results.items():
        if key == _GLOBAL_STEP_KEY or value is None:
            continue
        if isinstance(value, bytes):
            _write_serialized_summary(key, value, step)
        elif isinstance(value, (bool, int, float, np.number, np.bool_)):
            tf.summary.scalar(key, value, step=step)
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
