"""What a `tf.data.Dataset` is made of, read from its Python objects.

Checked on TensorFlow 2.21. A dataset made eagerly keeps its input datasets
(`DatasetV2._inputs()`), and `from_tensor_slices` / `from_tensors` keep the
tensors they were made from (`_tensors`). TensorFlow has no public way to
ask whether a pipeline only slices and batches tensors already in memory;
`in_memory_bytes` answers it for the few transformations it knows and
gives up (None) on anything else. Nor has it a public way to ask whether
an input never ends: `cardinality()` says infinite for a `repeat()` whose
input turns out empty at run time, which then ends; `never_ends` answers
for pipelines made of transformations that cannot end early.

Private symbols touched: `DatasetV2._inputs`, the classes of the datasets
`from_tensor_slices`, `from_tensors`, `batch` (without `num_parallel_calls`),
`take`, `skip` and `prefetch` make, and the sources' `_tensors`; for
`never_ends`, an iterator's `_dataset` and the classes of `range`, `map`,
parallel `batch`, `padded_batch`, `shuffle`, `repeat`, `zip`, `shard` and
`with_options` datasets.
"""

from __future__ import annotations

from typing import Any

TOUCHES = (
    "tensorflow.python.data.ops.dataset_ops:DatasetV2._inputs",
    "tensorflow.python.data.ops.from_tensor_slices_op:_TensorSliceDataset",
    "tensorflow.python.data.ops.from_tensor_slices_op:_TensorSliceDataset()._tensors",
    "tensorflow.python.data.ops.from_tensors_op:_TensorDataset",
    "tensorflow.python.data.ops.from_tensors_op:_TensorDataset()._tensors",
    "tensorflow.python.data.ops.batch_op:_BatchDataset",
    "tensorflow.python.data.ops.take_op:_TakeDataset",
    "tensorflow.python.data.ops.skip_op:_SkipDataset",
    "tensorflow.python.data.ops.prefetch_op:_PrefetchDataset",
    "tensorflow.python.data.ops.iterator_ops:OwnedIterator()._dataset",
    "tensorflow.python.data.ops.range_op:_RangeDataset",
    "tensorflow.python.data.ops.map_op:_MapDataset",
    "tensorflow.python.data.ops.map_op:_ParallelMapDataset",
    "tensorflow.python.data.ops.batch_op:_ParallelBatchDataset",
    "tensorflow.python.data.ops.padded_batch_op:_PaddedBatchDataset",
    "tensorflow.python.data.ops.shuffle_op:_ShuffleDataset",
    "tensorflow.python.data.ops.repeat_op:_RepeatDataset",
    "tensorflow.python.data.ops.zip_op:_ZipDataset",
    "tensorflow.python.data.ops.shard_op:_ShardDataset",
    "tensorflow.python.data.ops.dataset_ops:_OptionsDataset",
)

_kinds: list[tuple[type, ...]] = []


def _sources_and_steps() -> tuple[tuple[type, ...], tuple[type, ...]]:
    """(source classes, transformation classes) known to run no function."""
    if not _kinds:
        from tensorflow.python.data.ops import (
            batch_op,
            from_tensor_slices_op,
            from_tensors_op,
            prefetch_op,
            skip_op,
            take_op,
        )

        _kinds.append(
            (from_tensor_slices_op._TensorSliceDataset, from_tensors_op._TensorDataset)
        )
        _kinds.append(
            (
                batch_op._BatchDataset,
                take_op._TakeDataset,
                skip_op._SkipDataset,
                prefetch_op._PrefetchDataset,
            )
        )
    return _kinds[0], _kinds[1]


def in_memory_bytes(dataset: Any) -> int | None:
    """Bytes of the tensors `dataset` slices, or None if it does anything else.

    A number only for a chain of `batch` (without `num_parallel_calls`),
    `take`, `skip` and `prefetch` over one `from_tensor_slices` or
    `from_tensors` of numeric or bool tensors: no function runs on the
    elements, nothing is read from files, nothing is repeated, and no
    `tf.data.Options` are set (`with_options` is another transformation).
    Such a pipeline copies at most that many bytes per pass.
    """
    sources, steps = _sources_and_steps()
    node = dataset
    while type(node) in steps:
        inputs = node._inputs()
        if len(inputs) != 1:
            return None
        node = inputs[0]
    if type(node) not in sources:
        return None
    total = 0
    for tensor in getattr(node, "_tensors", None) or [None]:
        dtype = getattr(tensor, "dtype", None)
        count = getattr(getattr(tensor, "shape", None), "num_elements", lambda: None)()
        if dtype is None or count is None or not (dtype.is_numeric or dtype.is_bool):
            return None
        total += count * dtype.size
    return total


_endless_kinds: list[tuple[type, ...]] = []


def _kinds_never_ending_early() -> tuple[tuple[type, ...], type]:
    """(dataset classes that end only when their inputs do, the repeat class)."""
    if not _endless_kinds:
        from tensorflow.python.data.ops import (
            batch_op,
            dataset_ops,
            map_op,
            padded_batch_op,
            range_op,
            repeat_op,
            shard_op,
            shuffle_op,
            zip_op,
        )

        sources, steps = _sources_and_steps()
        _endless_kinds.append(
            (
                *sources,
                *steps,
                range_op._RangeDataset,
                map_op._MapDataset,
                map_op._ParallelMapDataset,
                batch_op._ParallelBatchDataset,
                padded_batch_op._PaddedBatchDataset,
                shuffle_op._ShuffleDataset,
                repeat_op._RepeatDataset,
                zip_op._ZipDataset,
                shard_op._ShardDataset,
                dataset_ops._OptionsDataset,
            )
        )
        _endless_kinds.append((repeat_op._RepeatDataset,))
    return _endless_kinds[0], _endless_kinds[1][0]


def never_ends(iterator: Any) -> bool:
    """Whether `iterator` (a `tf.data` iterator) can never run out of elements.

    True only for an iterator over one dataset whose cardinality is infinite
    and whose every part is a transformation that ends only when its input
    does (slicing, `map`, `batch`, `shuffle`, `zip`, ...), where each
    `repeat` repeats an input of a known, non-zero size. A `repeat` of an
    input of unknown size (`filter`, a generator, files) ends when a pass
    turns out empty; anything else gives False too.
    """
    dataset = getattr(iterator, "_dataset", None)
    if dataset is None:
        return False
    import tensorflow as tf

    if int(dataset.cardinality()) != tf.data.INFINITE_CARDINALITY:
        return False
    kinds, repeat = _kinds_never_ending_early()
    pending = [dataset]
    while pending:
        node = pending.pop()
        if type(node) not in kinds:
            return False
        inputs = node._inputs()
        if type(node) is repeat:
            size = int(inputs[0].cardinality())
            if size <= 0 and size != tf.data.INFINITE_CARDINALITY:
                return False
        pending.extend(inputs)
    return True
