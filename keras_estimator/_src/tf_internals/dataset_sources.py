"""What a `tf.data.Dataset` is made of, read from its Python objects.

Checked on TensorFlow 2.21. A dataset made eagerly keeps its input datasets
(`DatasetV2._inputs()`), and `from_tensor_slices` / `from_tensors` keep the
tensors they were made from (`_tensors`). TensorFlow has no public way to
ask whether a pipeline only slices and batches tensors already in memory;
`in_memory_bytes` answers it for the few transformations it knows and
gives up (None) on anything else.

Private symbols touched: `DatasetV2._inputs`, the classes of the datasets
`from_tensor_slices`, `from_tensors`, `batch` (without `num_parallel_calls`),
`take`, `skip` and `prefetch` make, and the sources' `_tensors`.
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
