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

from keras_estimator._src.tf_internals import summary_writers

logger = logging.getLogger("keras_estimator")

_GLOBAL_STEP_KEY = "global_step"


def to_python(value: Any) -> Any:
    """A metric value as evaluate() returns it: Python scalars, arrays, nests."""
    if tf.nest.is_nested(value):
        return tf.nest.map_structure(to_python, value)
    array = np.asarray(value)
    return array.item() if array.ndim == 0 else array


def write(results: dict[str, Any], step: int, writer: Any) -> None:
    """Writes `results` at `step` through the `tf.summary` file writer `writer`.

    The numbers go in one event, as tf.estimator 2.15 wrote them in one,
    each value as `tf.summary.scalar` writes it (a float32 tensor for the
    `scalars` plugin). Built here and written by one op: through
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
    """The summary value `tf.summary.scalar(key, value)` writes."""
    number = np.float32(value)
    tensor = tf.make_tensor_proto(number)
    # The writer's own encoding: the bytes in tensor_content.
    tensor.ClearField("float_val")
    tensor.tensor_content = number.tobytes()
    metadata = tf.compat.v1.SummaryMetadata(
        plugin_data=tf.compat.v1.SummaryMetadata.PluginData(plugin_name="scalars")
    )
    return tf.compat.v1.Summary.Value(tag=key, tensor=tensor, metadata=metadata)


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
