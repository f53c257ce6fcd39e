"""Raw summary ops on a `tf.summary` file writer's resource.

Checked on TensorFlow 2.21.

Private symbols touched: the writer's resource handle `_resource` (of
`summary_ops_v2._ResourceSummaryWriter`, the class
`tf.summary.create_file_writer` returns).
"""

from __future__ import annotations

from typing import Any

TOUCHES = ("tensorflow.python.ops.summary_ops_v2:_ResourceSummaryWriter()._resource",)


def resource_handle(writer: Any) -> Any:
    """The resource tensor of a `tf.summary` file writer, which its write ops take.

    Checked on TensorFlow 2.21: `tf.summary.write` passes it to its op, and
    a traced function captures it; it has no public accessor.
    """
    return writer._resource


def write_summary_proto(writer: Any, serialized: bytes, step: int) -> None:
    """Writes one serialized `Summary` proto at `step` through `writer`.

    Checked on TensorFlow 2.21. `tf.summary.experimental.write_raw_pb` does
    the same through the default-writer and `record_if` machinery, which
    costs ten times the op itself when called eagerly; the op needs the
    writer's resource, which has no public accessor.
    """
    import tensorflow as tf

    tf.raw_ops.WriteRawProtoSummary(
        writer=writer._resource, step=tf.constant(step, tf.int64), tensor=serialized
    )


def close_summary_writer(writer: Any) -> None:
    """Flushes and closes the event file of a `tf.summary` file writer.

    Checked on TensorFlow 2.21. `SummaryWriter.close()` marks the Python
    object closed for good; the raw op deletes the writer resource (closing
    its file) and leaves the handle, which traced functions captured, valid
    for `reopen_summary_writer`. The handle has no public accessor.
    """
    import tensorflow as tf

    with tf.init_scope(), tf.device("cpu:0"):
        tf.raw_ops.FlushSummaryWriter(writer=writer._resource)
        tf.raw_ops.CloseSummaryWriter(writer=writer._resource)


def reopen_summary_writer(writer: Any, logdir: str) -> None:
    """Re-creates a closed writer's resource under its handle, in a new event file.

    Functions that captured the handle write to the new file without a
    retrace. The arguments are `tf.summary.create_file_writer`'s defaults.
    """
    import tensorflow as tf

    with tf.init_scope(), tf.device("cpu:0"):
        tf.raw_ops.CreateSummaryFileWriter(
            writer=writer._resource,
            logdir=logdir,
            max_queue=10,
            flush_millis=120_000,
            filename_suffix=".v2",
        )
