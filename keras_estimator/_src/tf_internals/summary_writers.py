"""Raw summary ops on a `tf.summary` file writer's resource.

Checked on TensorFlow 2.21.

Private symbols touched: the writer's resource handle `_resource` (of
`summary_ops_v2._ResourceSummaryWriter`, the class
`tf.summary.create_file_writer` returns), which `writer_on_handle` sets.
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


def writer_on_handle(handle: Any) -> Any:
    """A `tf.summary` writer whose writes go to the writer resource `handle`.

    Checked on TensorFlow 2.21: `tf.summary.write` and `write_raw_pb` take
    the default writer's `_resource` as their op's writer input, and
    `as_default()` flushes the writer on exit. `handle` may be any resource
    tensor of the graph being traced (a function input, say), so one trace
    writes wherever the handle fed in points. Nothing is created.
    """
    import tensorflow as tf

    class _OnHandle(tf.summary.SummaryWriter):
        def __init__(self) -> None:
            self._resource = handle
            self._mesh = None

        def init(self) -> None:
            return None

        def flush(self) -> Any:
            with tf.device("cpu:0"):
                return tf.raw_ops.FlushSummaryWriter(writer=self._resource)

        def close(self) -> None:
            return None

    return _OnHandle()


def unset_writer_handle() -> Any:
    """A handle of a summary writer resource that is never created.

    A trace whose writes are fed the handle of the writer to use holds this
    one until fed; a write reaching it unfed fails (the resource is not
    found) rather than writing anywhere.
    """
    import tensorflow as tf

    with tf.init_scope(), tf.device("cpu:0"):
        return tf.raw_ops.SummaryWriter(shared_name="keras_estimator_unset_writer", container="")


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
