"""Summaries written from inside model_fn, for the hooks that ask for them.

`tf.summary.*` (TF2) and `tf.compat.v1.summary.*` (TF1) calls in a model_fn
are recorded only in runs whose hooks ask for summaries, as TF1's
`SummarySaverHook` ran the merged summary op only on its steps. A hook asks
by fetching `summary_fetch(output_dir)`; the step that computes the fetch
traces model_fn under a default writer for that directory and
`record_if(True)`, then writes the TF1 summary protos collected in the graph.
TF1 summary calls build TF1 ops in every trace (`tf_internals/v1_summaries`),
so their values are written as tf.estimator 2.15 wrote them (simple values
for scalars) and a hook's `summary_op` names the same op in every trace.
Every other trace records nothing (`record_if(False)`), so the summary calls
cost nothing in fused runs.

Summaries hold the values the step computed (the loss of its batch, the
variables before its update) and are labelled with the global step *after*
it, as tf.estimator's SummarySaverHook labelled them: with
`save_summary_steps=5`, the first three land at steps 1, 6 and 11.

Several directories due at one step (model_dir's hook and a hook of the
model_fn's own) each get the summaries, from one call of model_fn.

A training step traced once for all its compiled functions (`recording_fed`)
records its summaries through a writer it takes as an input (`FedWriter`):
each function that writes feeds the writer of its directory, and writes
inside the model_fn's control flow run only when it feeds a flag too, so
one trace, and one call of model_fn, serves the fused loop and every
directory hooks name.

Each directory has one writer, shared by every trace that writes there and
alive as long as one of them (or a hook using it) is: the trace graphs hold
it, so it goes with the Estimator whose functions they are. Its event file is
open only while a loop with a `SummarySaverHook` for that directory runs;
each run of a loop writes a new event file, as TensorBoard reads them all.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

from keras_estimator._src.engine.fetches import SUMMARY_PREFIX
from keras_estimator._src.tf_internals import (
    default_graph,
    distribute,
    summary_writers,
    v1_summaries,
)

logger = logging.getLogger("keras_estimator")

# The collection through which a trace graph keeps the writers it captured.
_WRITERS_COLLECTION = "keras_estimator_summary_writers"
# The loss summary `collect_loss` added to a graph (one per graph).
_LOSS_COLLECTION = "keras_estimator_loss_summary"


class EventFile:
    """One directory's summary writer, whose file is open only while in use.

    Traced steps capture the writer's resource handle, not its file: closing
    deletes the resource, flushing and closing the file, and reopening makes
    a new one (in a new event file) under the same handle, so functions
    traced earlier write to it again without a retrace.
    """

    def __init__(self, output_dir: str) -> None:
        with tf.init_scope():
            self.writer = tf.summary.create_file_writer(output_dir)
        self._output_dir = output_dir
        self._users = 0
        self._is_open = True

    def acquire(self) -> None:
        """Opens the event file (again) for a loop that writes to it."""
        if not self._is_open:
            summary_writers.reopen_summary_writer(self.writer, self._output_dir)
            self._is_open = True
        self._users += 1

    def release(self) -> None:
        """Closes the event file once no loop that acquired it is running."""
        self._users = max(self._users - 1, 0)
        if self._users == 0 and self._is_open:
            summary_writers.close_summary_writer(self.writer)
            self._is_open = False


# Held weakly: by the trace graphs that captured each writer and by the
# hooks using it, so a directory's writer goes with the last of them.
_event_files: weakref.WeakValueDictionary[str, EventFile] = weakref.WeakValueDictionary()


# The EstimatorSpec Scaffolds of the model_fn calls made: those 2.15's
# session finalized, so that their unset `summary_op` became `merge_all()`.
_SESSION_SCAFFOLDS: weakref.WeakSet[Any] = weakref.WeakSet()


def note_session_scaffold(scaffold: Any) -> None:
    """Records an EstimatorSpec's Scaffold (see `is_session_scaffold`)."""
    if scaffold is not None:
        _SESSION_SCAFFOLDS.add(scaffold)


def is_session_scaffold(scaffold: Any) -> bool:
    """Whether `scaffold` is an EstimatorSpec's: one 2.15's session finalized.

    A hook given another `tf.compat.v1.train.Scaffold()`, which nothing
    finalized, found its `summary_op` unset in 2.15 and saved no summaries.
    """
    return scaffold in _SESSION_SCAFFOLDS


def summary_fetch(output_dir: str) -> str:
    """The fetch key that makes a step write its summaries to `output_dir`."""
    return SUMMARY_PREFIX + output_dir


def summary_dirs(keys: Any) -> list[str]:
    return [k[len(SUMMARY_PREFIX) :] for k in keys if k.startswith(SUMMARY_PREFIX)]


def event_file(output_dir: str) -> EventFile:
    """The shared event file of `output_dir`'s writer."""
    shared = _event_files.get(output_dir)
    if shared is None:
        shared = EventFile(output_dir)
        _event_files[output_dir] = shared
    return shared


def writer_for(output_dir: str) -> Any:
    """The writer for `output_dir`, kept alive by the graph being traced."""
    shared = event_file(output_dir)
    graph = tf.compat.v1.get_default_graph()
    if graph.building_function:
        # Eagerly, writes happen at once: the caller's reference is enough,
        # and the process-wide default graph must not keep writers forever.
        graph.add_to_collection(_WRITERS_COLLECTION, shared)
    return shared.writer


@contextlib.contextmanager
def recording(output_dirs: list[str], step: tf.Tensor) -> Iterator[bool]:
    """Records the enclosed summaries to each of `output_dirs`, if any.

    The summaries are recorded to the first directory's writer (the default
    writer inside), then each write op the enclosed code made for that
    writer is repeated for the other directories' writers, on the same
    tensors: every directory due at this step gets what tf.estimator 2.15's
    hook for it wrote there (its own run of the merged summary op), from the
    one call of model_fn.
    """
    # TF1 summary calls build TF1 ops in every trace (the same ops under the
    # same names, as a hook's `summary_op` was fetched by), recorded below by
    # `write_collected` in the traces that record.
    if not output_dirs:
        with tf.summary.record_if(False), v1_summaries.as_protos():
            yield False
        return
    writers = [writer_for(output_dir) for output_dir in dict.fromkeys(output_dirs)]
    graph = tf.compat.v1.get_default_graph()
    first_new_op = len(graph.get_operations())
    with (
        writers[0].as_default(step=step),
        tf.summary.record_if(lambda: _outside_functions_of(graph)),
        v1_summaries.as_protos(),
    ):
        yield True
        if len(writers) > 1:
            _repeat_writes(graph, first_new_op, writers[0], writers[1:])


def _outside_functions_of(graph: Any) -> bool:
    """Whether the graph being traced is `graph` or its control flow.

    A function the model_fn calls (a `tf.function` helper) records nothing:
    TensorFlow reuses its trace wherever it is called next, with the writer
    and step it captured here. tf.estimator 2.15 wrote no summary made
    inside such a function either.
    """
    return not default_graph.in_function_between(tf.compat.v1.get_default_graph(), graph)


class FedWriter:
    """What a shared step's trace records its summaries through.

    One trace of a training step serves every run: the fused loop, which
    writes no summaries, and each step whose hooks ask for summaries, in
    whichever directories they name. So its summary writes take the writer
    as an input (`handle`), fed by each function that writes, and a write
    made inside the model_fn's control flow (a `tf.cond` branch, a loop, a
    function) runs only when `flag` is fed True; writes at the step's top
    level are ops of their own, which the functions that write no summaries
    leave out.

    Attributes:
        graph: the step's graph.
        handle: the writer input of every write (unfed: a writer that does
            not exist, so a write never goes anywhere unasked).
        flag: whether writes inside control flow run (unfed: False).
        nested_writes: how many writes were traced inside control flow,
            each guarded by `flag`.
    """

    def __init__(self) -> None:
        self.graph = tf.compat.v1.get_default_graph()
        with tf.device("cpu:0"):
            self.handle = tf.identity(
                self.graph.capture(summary_writers.unset_writer_handle()),
                name="summary_writer",
            )
            self.flag = tf.compat.v1.placeholder_with_default(
                False, [], name="record_nested_summaries"
            )
        self.nested_writes = 0

    def should_record(self) -> Any:
        """`record_if`'s condition: at the top level always, inside control flow `flag`.

        Never inside a function the model_fn calls (`_outside_functions_of`):
        this graph's flag and writer would be captured by a trace that later
        steps reuse.
        """
        graph = tf.compat.v1.get_default_graph()
        if graph is self.graph:
            return True
        if not _outside_functions_of(self.graph):
            return False
        self.nested_writes += 1
        return self.flag

    def repeat_writes(self, handles: list[Any]) -> list[Any]:
        """The step's top-level writes again, once for each of `handles`' writers.

        Added to the step's graph after its trace, for steps writing to
        several directories; each new write reads the same tensors. Writes
        inside control flow reach the first directory only.
        """
        writes = [
            op
            for op in self.graph.get_operations()
            if op.type in _WRITE_OPS and op.inputs[0].name == self.handle.name
        ]
        repeated = []
        with self.graph.as_default(), tf.device("cpu:0"):
            for handle in handles:
                captured = self.graph.capture(handle)
                for op in writes:
                    inputs = {
                        arg.name: tensor
                        for arg, tensor in zip(op.op_def.input_arg, op.inputs, strict=True)
                    }
                    write = _WRITE_OPS[op.type](**{**inputs, "writer": captured})
                    repeated.append(write if isinstance(write, tf.Operation) else write.op)
        return repeated


def fed_writer() -> FedWriter | None:
    """The `FedWriter` of the graph being traced, made on first use; None eagerly."""
    graph = tf.compat.v1.get_default_graph()
    if not graph.building_function:
        return None
    found = graph.get_collection(_FED_WRITER_COLLECTION)
    if found:
        return found[0]  # type: ignore[no-any-return]
    writer = FedWriter()
    graph.add_to_collection(_FED_WRITER_COLLECTION, writer)
    return writer


_FED_WRITER_COLLECTION = "keras_estimator_fed_summary_writer"


def fed_writer_of(graph: Any) -> FedWriter | None:
    """The `FedWriter` a trace made in `graph`, if any."""
    found = graph.get_collection(_FED_WRITER_COLLECTION)
    return found[0] if found else None


@contextlib.contextmanager
def recording_fed(step: tf.Tensor) -> Iterator[bool]:
    """Records the enclosed summaries through the trace's `FedWriter`.

    As `recording`, for a trace that serves every directory: the writes
    take their writer as an input. Eagerly, records nothing.
    """
    writer = fed_writer()
    if writer is None:
        with tf.summary.record_if(False), v1_summaries.as_protos():
            yield False
        return
    with (
        summary_writers.writer_on_handle(writer.handle).as_default(step=step),
        tf.summary.record_if(writer.should_record),
        v1_summaries.as_protos(),
    ):
        yield True


# Ops that write to a summary writer.
WRITE_OPS = frozenset(
    {
        "WriteSummary",
        "WriteRawProtoSummary",
        "WriteScalarSummary",
        "WriteHistogramSummary",
        "WriteImageSummary",
        "WriteAudioSummary",
        "WriteGraphSummary",
        "ImportEvent",
    }
)


def library_writes(graph: Any) -> int:
    """How many summary writes the functions `graph` calls hold (its control flow's)."""
    library = graph.as_graph_def().library
    return sum(
        1
        for function in library.function
        for node in function.node_def
        if node.op in WRITE_OPS
    )


# The ops `tf.summary.write` and `write_raw_pb` make, with the writer as
# their first input.
_WRITE_OPS = {"WriteSummary": tf.raw_ops.WriteSummary, "WriteRawProtoSummary": tf.raw_ops.WriteRawProtoSummary}


def _repeat_writes(graph: Any, first_new_op: int, written: Any, others: list[Any]) -> None:
    """Repeats, for each of `others`, the write ops to `written` made since `first_new_op`.

    Only writes through `written` (the default writer the enclosed code
    saw) are repeated; a model_fn's own writer keeps its summaries. A write
    made inside a branch or loop of the model_fn (its own graph) is not seen
    here and reaches the first directory only.
    """
    if not graph.building_function:
        return
    handle = summary_writers.resource_handle(written)
    target = graph.capture(handle).name
    writes = [
        op
        for op in graph.get_operations()[first_new_op:]
        if op.type in _WRITE_OPS and op.inputs[0].name == target
    ]
    for op in writes:
        inputs = {arg.name: tensor for arg, tensor in zip(op.op_def.input_arg, op.inputs, strict=True)}
        with tf.device("cpu:0"):
            for other in others:
                _WRITE_OPS[op.type](**{**inputs, "writer": summary_writers.resource_handle(other)})


def collect_loss(loss: Any) -> None:
    """Adds the training loss to the graph's TF1 summaries, as tf.estimator 2.15 did.

    2.15's `train()` added `tf.compat.v1.summary.scalar('loss', loss)` to
    `GraphKeys.SUMMARIES` once model_fn had returned, before any hook's
    `begin()`, unless that collection already held a summary op named `loss`
    (the model_fn's own). So a hook's `merge_all()` holds it, and the
    summary hook writes it (once) with the model_fn's other summaries. Its
    tag is its op's name, as TF1 made it unique: `loss_1` when the model_fn
    named a tensor `loss`. Replicas tracing into one graph add it once, of
    the loss reduced over them (see `_over_replicas`).

    The op is stateless: steps that do not fetch it leave it out, so it
    costs nothing outside the steps that write summaries.
    """
    if loss is None or tf.executing_eagerly():
        return
    loss = _over_replicas(loss)
    graph = tf.compat.v1.get_default_graph()
    if graph.get_collection(_LOSS_COLLECTION):
        return
    scope = graph.get_name_scope()
    own = f"{scope}/loss" if scope else "loss"
    collected = graph.get_collection(tf.compat.v1.GraphKeys.SUMMARIES)
    if any(getattr(getattr(summary, "op", None), "name", None) == own for summary in collected):
        return
    if loss.shape.rank != 0:
        loss = tf.reshape(loss, [])
    with v1_summaries.as_protos():
        summary = tf.compat.v1.summary.scalar("loss", loss)
    graph.add_to_collection(_LOSS_COLLECTION, summary)


def _over_replicas(loss: Any) -> Any:
    """The loss reduced over the replicas of a `MirroredStrategy`, else `loss`.

    tf.estimator 2.15 summarized the loss its distributed training reported:
    the replicas' losses reduced, not the first replica's: by the loss
    reduction (a mean) when a v1 optimizer scaled each replica's loss, else
    summed. Every replica calls this (a `merge_call` waits for all of them);
    the reduction is stateless, so steps that do not fetch the summary leave
    it out too.
    """
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return loss
    if not isinstance(tf.distribute.get_strategy(), tf.distribute.MirroredStrategy):
        return loss
    if loss.shape.rank != 0:
        loss = tf.reshape(loss, [])
    # Called in the model_fn's call, where v1 loss scaling is active.
    reduction = distribute.reported_loss_reduction(tf.compat.v1.get_default_graph())

    def reduce(strategy: Any, value: Any) -> Any:
        return strategy.reduce(reduction, value, axis=None)

    return context.merge_call(reduce, args=(loss,))


def write_collected() -> None:
    """Writes the TF1 summaries of the graph (the loss among them), in one event.

    As tf.estimator 2.15's summary hook wrote `merge_all()`: TF1 summaries,
    so the loss is a `simple_value` (what `summary_iterator` readers of
    2.15's event files take). TensorBoard shows it as it shows
    `tf.summary.scalar`'s.
    """
    protos = list(tf.compat.v1.get_default_graph().get_collection(tf.compat.v1.GraphKeys.SUMMARIES))
    if protos:
        tf.summary.experimental.write_raw_pb(
            protos[0] if len(protos) == 1 else tf.compat.v1.summary.merge(protos)
        )
