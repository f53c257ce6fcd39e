"""Input_fns that read through TF1 queues, on a Session of their own.

tf.estimator 2.15 called the input_fn in a graph and started the queue
runners it added (`tf.compat.v1.train.batch`, `shuffle_batch`,
`string_input_producer`, `limit_epochs`, a `FIFOQueue` fed through
`add_queue_runner`) in the training session: each step evaluated the
input_fn's tensors once, taking the next element from the queues, and a
queue closed at the end of its epochs (OutOfRangeError) ended training or
evaluation. Called eagerly, such an input_fn fails ("QueueRunners are not
supported when eager execution is enabled").

Here the input_fn is called again in a graph of its own (seeded with
`RunConfig.tf_random_seed`, as 2.15's was), and its outputs become a
`tf.data.Dataset.from_generator` whose iterator opens a Session on that
graph, initializes its variables and tables, starts its queue runners, and
yields one evaluation of the outputs per element until a queue says
OutOfRange. The iterator's end stops the runners and closes the Session.

The same holds for an input_fn that starts no queue runner but whose
tensors read queue-like state: `limit_epochs` tensors returned as they are
(each evaluation counts one epoch, and OutOfRange after the last ended
prediction and evaluation), or a `FIFOQueue` it fills and dequeues itself
(each evaluation takes the next values). Called eagerly, such an input_fn
runs without error, once: every step would get its first values and
prediction would never end. So the ops it ran eagerly are watched
(`READS_QUEUE_STATE`), and if one of them ran, its outputs are read per
element on a Session, as above.

Element shapes are the outputs' static shapes; a tensor of unknown rank (a
`FIFOQueue` made without shapes dequeues such tensors) takes the rank of
its first value, with every dimension left open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import tensorflow as tf

# TensorFlow's errors when queue runners (RuntimeError) or its queue-based
# batching functions (ValueError: `tf.compat.v1.train.batch`, ...) are
# called eagerly.
_EAGER_QUEUE_ERRORS = (
    (RuntimeError, "QueueRunners are not supported when eager execution is enabled"),
    (ValueError, "Input pipelines based on Queues are not supported when eager"),
)


# Ops whose eager run means the input_fn's tensors change from one
# evaluation to the next in a TF1 graph: dequeues (`FIFOQueue.dequeue*`,
# and so every queue's), and the epoch counter of `limit_epochs`.
READS_QUEUE_STATE = frozenset(
    {
        "QueueDequeueV2",
        "QueueDequeueManyV2",
        "QueueDequeueUpToV2",
        "ResourceCountUpTo",
        "CountUpTo",
    }
)


def uses_queue_runners(error: BaseException) -> bool:
    """Whether `error` is one an input_fn using TF1 queues raises eagerly."""
    return any(
        isinstance(error, kind) and message in str(error)
        for kind, message in _EAGER_QUEUE_ERRORS
    )


def dataset_from_queues(call: Callable[[], Any], seed: int | None) -> tf.data.Dataset:
    """The input_fn's outputs, evaluated once per element, as 2.15's session did.

    Args:
        call: calls input_fn with its arguments.
        seed: the graph seed of the input_fn's graph (`RunConfig.tf_random_seed`).
    """
    graph = tf.Graph()
    with graph.as_default():
        graph.seed = seed
        outputs = call()
        if isinstance(outputs, tf.data.Dataset):
            raise ValueError(
                "input_fn both starts TF1 queue runners and returns a "
                "tf.data.Dataset; return either the dataset or the queues' tensors."
            )
        initializers = tf.group(
            tf.compat.v1.global_variables_initializer(),
            tf.compat.v1.local_variables_initializer(),
            tf.compat.v1.tables_initializer(),
        )
    if isinstance(outputs, (tuple, list)) and len(outputs) == 2 and outputs[1] is None:
        outputs = outputs[0]  # (features, None): features alone, labels None
    fetches = tf.nest.map_structure(_as_tensor, outputs)
    session, coordinator, threads = _start(graph, initializers)
    try:
        first = session.run(fetches)
    except tf.errors.OutOfRangeError:
        first = None
    finally:
        _stop(session, coordinator, threads)
    signature = tf.nest.map_structure(_spec, fetches, first if first is not None else fetches)

    def elements() -> Iterator[Any]:
        session, coordinator, threads = _start(graph, initializers)
        try:
            while True:
                try:
                    value = session.run(fetches)
                except tf.errors.OutOfRangeError:
                    return
                yield tf.nest.map_structure(_as_value, value, signature)
        finally:
            _stop(session, coordinator, threads)

    return tf.data.Dataset.from_generator(elements, output_signature=signature)


def _start(graph: tf.Graph, initializers: Any) -> tuple[Any, Any, list[Any]]:
    session = tf.compat.v1.Session(graph=graph)
    session.run(initializers)
    coordinator = tf.compat.v1.train.Coordinator()
    with graph.as_default():
        threads = tf.compat.v1.train.start_queue_runners(session, coordinator)
    return session, coordinator, threads


def _stop(session: Any, coordinator: Any, threads: list[Any]) -> None:
    coordinator.request_stop()
    session.close()  # cancels the runners' pending enqueues
    coordinator.join(threads, stop_grace_period_secs=5, ignore_live_threads=True)


def _as_tensor(value: Any) -> Any:
    if isinstance(value, (tf.Tensor, tf.SparseTensor)):
        return value
    return tf.convert_to_tensor(value)


def _spec(tensor: Any, first: Any) -> Any:
    if isinstance(tensor, tf.SparseTensor):
        return tf.SparseTensorSpec(tensor.shape, tensor.dtype)
    shape = tensor.shape
    if shape.rank is None and first is not None and not isinstance(first, tf.Tensor):
        shape = tf.TensorShape([None] * np.ndim(first))
    return tf.TensorSpec(shape, tensor.dtype)


def _as_value(value: Any, spec: Any) -> Any:
    if isinstance(spec, tf.SparseTensorSpec):
        return tf.SparseTensor(value.indices, value.values, value.dense_shape)
    return value
