"""Routing an input_fn's eager dataset-making ops through cached traced functions.

Checked on TensorFlow 2.21. Every eager op runs as a one-op function, and
the eager runtime caches that function's kernel for the next call of the
same op with the same attributes, except for dataset ops
(`KernelCacheEnabled` refuses any op `DatasetOpKernel::IsDatasetOp` names):
each `TensorSliceDataset` or `BatchDatasetV2` an input_fn makes eagerly
builds, optimises and instantiates a function again, about 0.5 ms of CPU
per op, while the kernel itself takes a fraction of that. A traced function
holding the same op, called with the same inputs, keeps its instantiation.

While a thread is inside `cached_dataset_ops`, the `gen_dataset_ops` makers
of datasets that hold no function and no resource (slices, tensors, ranges,
batches, padded batches, takes, skips, repeats, prefetches, zips,
concatenations, shards) run, in that thread and when executing eagerly, the
same op with the same attributes and inputs inside a traced function kept
per op and attributes; the dataset made is the op's, element for element.
An op is routed only when it is seen again (a program that calls its
input_fn once traces nothing), and only when every input is an eager
tensor and every attribute a plain value; anything else, and any error the
traced call raises, goes to TensorFlow's own maker, which then raises as it
always did. The makers are TensorFlow's own outside the context, in other
threads, and everywhere once no thread is inside it.

Private symbols touched: the makers named in `TOUCHES`, replaced meanwhile.
"""

from __future__ import annotations

import collections
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

_MAKERS = (
    "tensor_slice_dataset",
    "tensor_dataset",
    "range_dataset",
    "batch_dataset_v2",
    "padded_batch_dataset_v2",
    "take_dataset",
    "skip_dataset",
    "repeat_dataset",
    "prefetch_dataset",
    "zip_dataset",
    "concatenate_dataset",
    "shard_dataset",
)

TOUCHES = (
    *(f"tensorflow.python.ops.gen_dataset_ops:{name}" for name in _MAKERS),
    "tensorflow.python.framework.ops:EagerTensor",
)

# Traced functions kept, least recently used dropped first; keys seen once.
_MAX_FUNCTIONS = 64
_MAX_SEEN = 256

_lock = threading.Lock()
_users = [0]
_originals: dict[str, Any] = {}
_state = threading.local()
_functions: collections.OrderedDict[Any, Any] = collections.OrderedDict()
_seen: collections.OrderedDict[Any, None] = collections.OrderedDict()


@contextlib.contextmanager
def cached_dataset_ops(single_threaded: bool) -> Iterator[None]:
    """Within, this thread's eager dataset makers run through cached traced functions.

    Args:
        single_threaded: call them on TensorFlow's single-threaded executor
            (`function_calls.call_traced`); only where the process has no
            accelerator.
    """
    from tensorflow.python.ops import gen_dataset_ops

    with _lock:
        if not _users[0]:
            for name in _MAKERS:
                original = getattr(gen_dataset_ops, name)
                _originals[name] = original
                setattr(gen_dataset_ops, name, _routed(name, original))
        _users[0] += 1
    saved = getattr(_state, "single_threaded", None)
    _state.single_threaded = single_threaded
    try:
        yield
    finally:
        _state.single_threaded = saved
        with _lock:
            _users[0] -= 1
            if not _users[0]:
                for name in _MAKERS:
                    setattr(gen_dataset_ops, name, _originals.pop(name))


def is_routing() -> bool:
    """Whether TensorFlow's dataset makers are replaced now (by some thread)."""
    return bool(_users[0])


def _routed(name: str, original: Any) -> Any:
    def maker(*args: Any, **kwargs: Any) -> Any:
        single_threaded = getattr(_state, "single_threaded", None)
        if single_threaded is None:
            return original(*args, **kwargs)
        import tensorflow as tf

        if not tf.executing_eagerly():
            return original(*args, **kwargs)
        key, tensors = _key(name, args, kwargs)
        if key is None:
            return original(*args, **kwargs)
        function = _function(key, original, args, kwargs, tensors)
        if function is None:
            return original(*args, **kwargs)
        from keras_estimator._src.tf_internals import function_calls

        try:
            return function_calls.call_traced(function, *tensors, single_threaded=single_threaded)
        except tf.errors.OpError:
            # TensorFlow's own maker raises its own error (or makes it).
            return original(*args, **kwargs)

    maker.__doc__ = original.__doc__
    maker.__name__ = getattr(original, "__name__", name)
    maker.__wrapped__ = original  # type: ignore[attr-defined]
    return maker


def _key(name: str, args: Any, kwargs: Any) -> tuple[Any, list[Any]]:
    """(the op's key: its attributes and its inputs' dtypes, the eager inputs) or (None, [])."""
    import tensorflow as tf
    from tensorflow.python.framework import ops

    tensors: list[Any] = []

    def describe(value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return (type(value).__name__, tuple(describe(item) for item in value))
        if isinstance(value, ops.EagerTensor):
            tensors.append(value)
            return ("tensor", value.dtype.name)
        if value is None or isinstance(value, (bool, int, float, str, bytes)):
            return (type(value).__name__, value)
        if isinstance(value, tf.DType):
            return ("dtype", value.name)
        if isinstance(value, tf.TensorShape):
            return ("shape", None if value.rank is None else tuple(value.as_list()))
        raise _NotPlain

    try:
        key = (
            name,
            describe(list(args)),
            tuple((k, describe(kwargs[k])) for k in sorted(kwargs)),
        )
    except _NotPlain:
        return None, []
    return key, tensors


class _NotPlain(Exception):
    """An argument that is neither an eager tensor nor a plain attribute value."""


def _function(key: Any, original: Any, args: Any, kwargs: Any, tensors: list[Any]) -> Any:
    """The traced function of `key`; None the first time the key is seen."""
    with _lock:
        function = _functions.get(key)
        if function is not None:
            _functions.move_to_end(key)
            return function
        if key not in _seen:
            _seen[key] = None
            if len(_seen) > _MAX_SEEN:
                _seen.popitem(last=False)
            return None
    function = _trace(original, args, kwargs, tensors)
    with _lock:
        _functions[key] = function
        if len(_functions) > _MAX_FUNCTIONS:
            _functions.popitem(last=False)
    return function


def _trace(original: Any, args: Any, kwargs: Any, tensors: list[Any]) -> Any:
    """A traced function of the eager inputs making the op with the same attributes."""
    import tensorflow as tf
    from tensorflow.python.framework import ops

    def rebuild(value: Any, inputs: Iterator[Any]) -> Any:
        if isinstance(value, (list, tuple)):
            return type(value)(rebuild(item, inputs) for item in value)
        if isinstance(value, ops.EagerTensor):
            return next(inputs)
        return value

    def body(*inputs: Any) -> Any:
        feed = iter(inputs)
        made_args = rebuild(list(args), feed)
        made_kwargs = {k: rebuild(kwargs[k], feed) for k in sorted(kwargs)}
        return original(*made_args, **made_kwargs)

    signature = [tf.TensorSpec(None, tensor.dtype) for tensor in tensors]
    return tf.function(body, autograph=False).get_concrete_function(*signature)
