"""Input_fns that read through `tf.compat.v1` dataset iterators.

Under tf.estimator an input_fn ran once, in a graph, and its tensors were
evaluated at every step: the tensors of an iterator's `get_next()` gave the
next element each time, and the end of the data ended training or
evaluation. Called eagerly, the same input_fn would return its first batch
as constants. This module keeps the graph semantics on top of tf.data:

1. input_fn is called eagerly (as any input_fn is) with the iterator
   constructors redirected to `_RecordingIterator`s, which note each dataset
   and hand back a stand-in element (zeros, unknown sizes 0), so the call
   returns as it did before. Reading the first element instead would make
   an iterator, and a shuffle's seed generator gives each new iterator the
   next order: training would start at the order 2.15's second epoch had.
   Only if input_fn fails on the stand-in, or returns a dataset (which may
   hold what it read), is it called again on the first element itself.
2. If an iterator was made and input_fn did not return a dataset, input_fn is
   called once more, inside a `tf.compat.v1.wrap_function` graph, where
   `get_next()` returns placeholders of the element spec. What input_fn does
   with them (`{"x": features["x"] * 2}`) is the graph from those
   placeholders to its outputs, which becomes a function.
3. The result is the datasets of the first call, zipped, mapped by that
   function: one element per step, ending with the data.

The datasets come from the eager call, so they are exactly those a
Dataset-returning input_fn would give (options, seeds, Python functions).
Initializers that input_fn adds to `TABLE_INITIALIZERS` (lookup tables used
on the batch) run once, as tf.estimator's Scaffold ran them at session
start.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import tensorflow as tf

from keras_estimator._src.base import graph_walks
from keras_estimator._src.engine import queue_input
from keras_estimator._src.tf_internals import (
    eager_op_types,
    graph_seeds,
    pruning,
    v1_iterators,
)

_HOW_TO_RETURN_A_DATASET = (
    "Return the dataset itself from input_fn (e.g. `return dataset`, mapping "
    "any post-processing with `dataset.map`)."
)


def call_input_fn(call: Callable[[], Any]) -> Any:
    """Calls input_fn, turning its v1 iterators' elements into a dataset.

    Args:
        call: calls input_fn with its arguments.

    Returns:
        What input_fn returned, or, when it returned tensors taken from
        `tf.compat.v1` iterators, a `tf.data.Dataset` of its return value
        at each successive element of those iterators; when it used TF1
        queues (queue runners, a queue it dequeues, `limit_epochs`), a
        `tf.data.Dataset` of its return value at each evaluation on a
        Session (`queue_input`).

    Raises:
        ValueError: input_fn feeds its dataset through a placeholder, makes
            different iterators when called again, or uses an iterator in a
            way a dataset cannot express.
    """
    try:
        first, result, queue_reads = _first_eager_call(call)
    except (RuntimeError, ValueError) as error:
        if queue_input.uses_queue_runners(error):
            # TF1 queues: read on a Session of their own, as 2.15's session did.
            return queue_input.dataset_from_queues(call, graph_seeds.input_fn_graph_seed())
        if isinstance(error, RuntimeError) and "placeholder" in str(error) and "eager" in str(error):
            raise ValueError(
                f"input_fn creates a tf.compat.v1.placeholder ({error}); "
                "nothing feeds placeholders here (there is no Session, and "
                "no feed_dict from hooks). Build the dataset from the values "
                "themselves, e.g. tf.data.Dataset.from_tensor_slices(array). "
                + _HOW_TO_RETURN_A_DATASET
            ) from error
        raise
    if isinstance(result, tf.data.Dataset):
        return result
    if queue_reads:
        # limit_epochs' counter or a queue the input_fn dequeues itself: in
        # 2.15's session each step evaluated them anew, as on a Session here.
        return queue_input.dataset_from_queues(call, graph_seeds.input_fn_graph_seed())
    if not first.iterators:
        return result
    dataset = _dataset_from_graph_call(call, first)
    return result if dataset is None else dataset


def _first_eager_call(call: Callable[[], Any]) -> tuple[_Recording, Any, set[str]]:
    """Calls input_fn eagerly on stand-in elements, or on the first ones if need be.

    Returns the recording of its iterators, its result and its queue reads.
    """
    recording = _Recording(in_graph=False, stand_ins=True)
    try:
        result, queue_reads = _eager_call(call, recording)
    except Exception:
        if not recording.stood_in:
            raise
        # input_fn cannot work on an empty element.
    else:
        if not (recording.stood_in and isinstance(result, tf.data.Dataset)):
            return recording, result, queue_reads
        # The dataset it returned may hold what it read from an iterator.
    recording = _Recording(in_graph=False)
    result, queue_reads = _eager_call(call, recording)
    return recording, result, queue_reads


def _eager_call(call: Callable[[], Any], recording: _Recording) -> tuple[Any, set[str]]:
    """Calls input_fn eagerly, recording its iterators; returns its result and queue reads."""
    with (
        v1_iterators.redirect_v1_iterators(recording.make_iterator),
        _eager_collections(),
        eager_op_types.eager_ops_of_types(queue_input.READS_QUEUE_STATE) as queue_reads,
    ):
        result = call()
    return result, queue_reads


@contextlib.contextmanager
def _eager_collections() -> Iterator[None]:
    """Drops the `None`s an eager call adds to TABLE_INITIALIZERS.

    Called eagerly, the TF1 idiom `add_to_collection(TABLE_INITIALIZERS,
    iterator.initializer)` adds the eager initializer (None) to the global
    graph, whose collections every later function trace copies.
    """
    if not tf.executing_eagerly():
        yield
        return
    key = tf.compat.v1.GraphKeys.TABLE_INITIALIZERS
    collection = tf.compat.v1.get_default_graph().get_collection_ref(key)
    before = len(collection)
    try:
        yield
    finally:
        collection[before:] = [op for op in collection[before:] if op is not None]


def _dataset_from_graph_call(call: Callable[[], Any], first: _Recording) -> Any:
    """Calls input_fn in a graph; its outputs per element of the iterators."""
    second = _Recording(in_graph=True, datasets=[it.dataset for it in first.iterators])
    outputs: list[Any] = []

    def body() -> None:
        with v1_iterators.redirect_v1_iterators(second.make_iterator):
            outputs.append(tf.nest.map_structure(_as_tensor, call()))

    try:
        wrapped = tf.compat.v1.wrap_function(body, [])
    except Exception as error:
        error.add_note(
            "input_fn makes a tf.compat.v1 iterator, so it was called again in "
            "a graph (as tf.estimator called it) to learn what it computes from "
            "get_next(); that call failed. " + _HOW_TO_RETURN_A_DATASET
        )
        raise
    used = [it for it in second.iterators if it.placeholders is not None]
    if not used:
        return None  # No get_next(): the outputs are constants, as before.
    if len(second.iterators) != len(first.iterators):
        raise ValueError(
            f"input_fn made {len(first.iterators)} tf.compat.v1 iterator(s) when "
            f"called eagerly and {len(second.iterators)} when called in a graph; "
            "it must make the same iterators on every call. " + _HOW_TO_RETURN_A_DATASET
        )
    _check_no_foreign_placeholders(wrapped.graph, second)
    _run_table_initializers(wrapped, second)
    return _mapped_dataset(wrapped, used, outputs[0])


def _mapped_dataset(wrapped: Any, used: list[_RecordingIterator], outputs: Any) -> Any:
    feeds = [p for it in used for p in it.flat_placeholders()]
    flat_outputs = tf.nest.flatten(outputs, expand_composites=True)
    function = pruning.prune(wrapped, feeds, flat_outputs)

    def apply(*elements: Any) -> Any:
        flat = [t for e in elements for t in tf.nest.flatten(e, expand_composites=True)]
        results = function(*flat)
        for result, output in zip(results, flat_outputs, strict=True):
            # The pruned function forgets some static shapes (a table lookup's).
            result.set_shape(output.shape)
        return tf.nest.pack_sequence_as(outputs, results, expand_composites=True)

    # A one-dataset zip too, so that `apply` gets one argument per iterator
    # whatever the structure of the elements.
    return tf.data.Dataset.zip(tuple(it.dataset for it in used)).map(apply)


def _run_table_initializers(wrapped: Any, recording: _Recording) -> None:
    key = tf.compat.v1.GraphKeys.TABLE_INITIALIZERS
    initializers = [
        op for op in wrapped.graph.get_collection(key) if op not in recording.no_ops
    ]
    if not initializers:
        return
    placeholders = {p.op.name for it in recording.iterators for p in it.flat_placeholders()}
    for op in initializers:
        if placeholders & graph_walks.ops_needed_by([op]):
            raise ValueError(
                f"input_fn adds {op.name!r} to TABLE_INITIALIZERS, which reads "
                "an iterator's get_next(); initializers run once, before any "
                "element is read. Build the table from values that do not "
                "come from the iterator."
            )
    pruning.prune(wrapped, [], initializers)()


def _check_no_foreign_placeholders(graph: Any, recording: _Recording) -> None:
    ours = {p.op for it in recording.iterators for p in it.flat_placeholders()}
    captured = {t.op for t in graph.internal_captures}
    for op in graph.get_operations():
        if op.type in ("Placeholder", "PlaceholderV2") and op not in ours | captured:
            raise ValueError(
                f"input_fn creates the placeholder {op.name!r}; nothing feeds "
                "placeholders here (there is no Session, and no feed_dict from "
                "hooks). Use the values themselves, e.g. tf.constant(array) or "
                "tf.data.Dataset.from_tensor_slices(array). " + _HOW_TO_RETURN_A_DATASET
            )


def _as_tensor(value: Any) -> Any:
    if isinstance(value, (tf.Tensor, tf.SparseTensor, tf.RaggedTensor)):
        return value
    return tf.convert_to_tensor(value)


class _Recording:
    """The iterators one call of input_fn made, in order."""

    def __init__(
        self, in_graph: bool, datasets: list[Any] | None = None, stand_ins: bool = False
    ) -> None:
        self.in_graph = in_graph
        # Eagerly, get_next() gives zeros rather than the first element
        # (see the module); `stood_in` says whether it did.
        self.stand_ins = stand_ins
        self.stood_in = False
        self.iterators: list[_RecordingIterator] = []
        self.no_ops: list[Any] = []
        self._first_call_datasets = datasets

    def make_iterator(self, dataset: Any) -> _RecordingIterator:
        spec = dataset.element_spec
        if self._first_call_datasets is not None:
            index = len(self.iterators)
            if index >= len(self._first_call_datasets):
                raise ValueError(
                    f"input_fn made {index + 1} tf.compat.v1 iterators when "
                    f"called in a graph but {len(self._first_call_datasets)} "
                    "when called eagerly; it must make the same iterators on "
                    "every call. " + _HOW_TO_RETURN_A_DATASET
                )
            # The dataset of the eager call feeds this iterator's placeholders.
            graph_spec = spec
            dataset = self._first_call_datasets[index]
            spec = dataset.element_spec
            _check_same_spec(graph_spec, spec, index)
        iterator = _RecordingIterator(dataset, spec, self)
        self.iterators.append(iterator)
        return iterator


def _check_same_spec(graph_spec: Any, eager_spec: Any, index: int) -> None:
    try:
        tf.nest.assert_same_structure(graph_spec, eager_spec, expand_composites=True)
        compatible = all(
            a.is_compatible_with(b)
            for a, b in zip(
                tf.nest.flatten(graph_spec, expand_composites=True),
                tf.nest.flatten(eager_spec, expand_composites=True),
                strict=True,
            )
        )
    except (TypeError, ValueError):
        compatible = False
    if not compatible:
        raise ValueError(
            f"input_fn's iterator {index} reads elements {graph_spec} when "
            f"called in a graph but {eager_spec} when called eagerly; it must "
            "build the same dataset on every call. " + _HOW_TO_RETURN_A_DATASET
        )


class _RecordingIterator:
    """Stands in for a `tf.compat.v1.data.Iterator` while input_fn runs.

    `dataset` is the one that will feed it: in the graph call, that of the
    eager call's iterator at the same position.

    In the eager call `get_next()` returns the dataset's first element, so
    that input_fn runs to its end; in the graph call, placeholders of the
    element spec, which `_mapped_dataset` later feeds with every element.
    """

    def __init__(self, dataset: Any, spec: Any, recording: _Recording) -> None:
        self.dataset = dataset
        self.element_spec = spec
        self.placeholders: Any = None
        self._flat_placeholders: list[Any] = []
        self._recording = recording

    @property
    def output_types(self) -> Any:
        return tf.compat.v1.data.get_output_types(self)

    @property
    def output_shapes(self) -> Any:
        return tf.compat.v1.data.get_output_shapes(self)

    @property
    def output_classes(self) -> Any:
        return tf.compat.v1.data.get_output_classes(self)

    @property
    def initializer(self) -> Any:
        """A no-op: the dataset is read from its start by the loop."""
        if not self._recording.in_graph:
            return None
        op = tf.no_op(name="iterator_initializer")
        self._recording.no_ops.append(op)
        return op

    def get_next(self, name: str | None = None) -> Any:
        del name
        if not self._recording.in_graph:
            specs = tf.nest.flatten(self.element_spec, expand_composites=True)
            if self._recording.stand_ins and all(
                type(spec) is tf.TensorSpec for spec in tf.nest.flatten(self.element_spec)
            ) and all(spec.dtype not in (tf.resource, tf.variant) for spec in specs):
                self._recording.stood_in = True
                return tf.nest.map_structure(_zeros, self.element_spec)
            return _first_element(self.dataset)
        if self.placeholders is not None:
            raise ValueError(
                "input_fn calls get_next() more than once on one tf.compat.v1 "
                "iterator; in a graph each call takes its own element per "
                "step. Call get_next() once and reuse its tensors, or batch "
                "the dataset (dataset.batch) to read several elements at once."
            )
        flat = [
            tf.compat.v1.placeholder(spec.dtype, spec.shape, name="element")
            for spec in tf.nest.flatten(self.element_spec, expand_composites=True)
        ]
        self.placeholders = tf.nest.pack_sequence_as(
            self.element_spec, flat, expand_composites=True
        )
        self._flat_placeholders = flat
        # input_fn gets its own containers: it may edit them (`f.pop('label')`,
        # as the cloudml-samples census input_fn does) while every
        # placeholder stays fed from the dataset's element.
        return tf.nest.pack_sequence_as(self.element_spec, flat, expand_composites=True)

    def flat_placeholders(self) -> list[Any]:
        if self.placeholders is None:
            return []
        return list(self._flat_placeholders)

    def make_initializer(self, dataset: Any, name: str | None = None) -> Any:
        raise ValueError(
            f"input_fn calls make_initializer({dataset!r}) on a tf.compat.v1 "
            "iterator; re-initializable iterators switch datasets from a "
            "Session, which the Estimator has none of. Use one input_fn per "
            "dataset. " + _HOW_TO_RETURN_A_DATASET
        )

    def string_handle(self, name: str | None = None) -> Any:
        raise ValueError(
            "input_fn calls string_handle() on a tf.compat.v1 iterator; "
            "feedable iterators are selected through a Session's feed_dict, "
            "which the Estimator has none of. " + _HOW_TO_RETURN_A_DATASET
        )

    def get_next_as_optional(self) -> Any:
        raise ValueError(
            "input_fn calls get_next_as_optional() on a tf.compat.v1 "
            "iterator; the Estimator ends the loop at the end of the data "
            "itself. Call get_next() instead."
        )


def _first_element(dataset: Any) -> Any:
    """The first element (zeros if there is none), to let input_fn run on."""
    if not tf.executing_eagerly():
        return dataset.take(1).get_single_element()
    for element in dataset.take(1):
        return element
    return tf.nest.map_structure(_zeros, dataset.element_spec)


def _zeros(spec: Any) -> Any:
    if not isinstance(spec, tf.TensorSpec):
        raise ValueError(
            f"input_fn's tf.compat.v1 iterator reads an empty dataset of "
            f"{spec}; give it at least one element. " + _HOW_TO_RETURN_A_DATASET
        )
    if spec.shape.rank is None:
        return tf.zeros([], spec.dtype)
    shape = [0 if size is None else size for size in spec.shape.as_list()]
    return tf.zeros(shape, spec.dtype)
