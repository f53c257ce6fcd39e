"""Turning what an input_fn returns into a `tf.data.Dataset` for the loop."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator._src.base import fn_args
from keras_estimator._src.engine import step_call
from keras_estimator._src.engine import v1_iterator_input as _v1_iterator_input
from keras_estimator._src.tf_internals import (
    dataset_sources,
    eager_dataset_ops,
    function_calls,
    graph_seeds,
)

logger = logging.getLogger("keras_estimator")


def make_dataset(
    input_fn: Callable[..., Any],
    mode: str,
    params: dict[str, Any],
    config: Any,
    input_context: tf.distribute.InputContext | None = None,
) -> tf.data.Dataset:
    """Calls `input_fn` and returns a dataset of `(features, labels)` or features.

    input_fn may return a dataset whose elements are `(features, labels)` or
    just features, or a `(features, labels)` tuple of tensors (which is then
    repeated, as a TF1 input pipeline would keep feeding the same tensors).
    Tensors taken from `tf.compat.v1` dataset iterators give the next
    element at each step instead, ending with the data
    (`v1_iterator_input`).

    Raises:
        TypeError: input_fn is not callable, requires parameters the
            Estimator does not pass, or returns something else (or values
            that cannot be made into tensors, or a feature that is None).
        ValueError: labels are missing in TRAIN mode.
    """
    if not callable(input_fn):
        raise TypeError(
            f"input_fn must be callable, got {input_fn!r}. Pass a function "
            "returning a tf.data.Dataset of (features, labels)."
        )
    candidates: dict[str, Any] = {"mode": mode, "params": params, "config": config}
    if input_context is not None:
        candidates["input_context"] = input_context
    _check_input_fn_parameters(input_fn, candidates)
    # An input_fn reading through tf.compat.v1 iterators is turned into a
    # dataset of its successive outputs, as its graph would have given.
    # Its random ops (shuffles, samples) are seeded from RunConfig's
    # tf_random_seed, as in the graph tf.estimator 2.15 called it in.
    seed = getattr(config, "tf_random_seed", None)

    def call() -> Any:
        return fn_args.call_with_accepted(input_fn, candidates)

    with graph_seeds.input_fn_seeds(seed) as random_ops, _cached_dataset_ops():
        result = _v1_iterator_input.call_input_fn(call)
    if isinstance(result, tf.data.Dataset):
        dataset = result
    elif isinstance(result, (tuple, list)) and len(result) == 2:
        # (features, labels), as a tuple or a list, as tf.estimator 2.15 took it.
        _check_features(_tensors_as_tuple(result[0]))
        dataset = _repeated_tensors(*_tensor_element(result))
    elif not isinstance(result, (tuple, list)) and _is_feature_structure(result):
        _check_features(result)
        dataset = _repeated_tensors(*_tensor_element(result))
    elif isinstance(result, (tuple, list)):
        # tf.estimator 2.15 raised ValueError for a tuple of another length.
        raise ValueError(
            "input_fn should return (features, labels) as a len 2 tuple: "
            f"input_fn returned {type(result).__name__} of {len(result)} elements "
            f"({_short(result)}); return a tf.data.Dataset of (features, labels) "
            "or features, or a (features, labels) tuple of tensors."
        )
    else:
        raise TypeError(
            f"input_fn returned {type(result).__name__} ({_short(result)}); "
            "expected a tf.data.Dataset of (features, labels) or features, or a "
            "(features, labels) tuple of tensors."
        )
    if not isinstance(result, tf.data.Dataset) and random_ops.ran_eagerly:
        dataset = _computed_each_step(call, seed, dataset)
    if mode == "infer" and not isinstance(result, tf.data.Dataset):
        # Repeated tensors never end; tf.estimator 2.15 warned so too.
        logger.warning(
            "Input graph does not use tf.data.Dataset or contain a QueueRunner. "
            "That means predict yields forever. This is probably a mistake."
        )
    _check_element(dataset.element_spec)
    return dataset


# Set to 0 to have an input_fn's datasets made by TensorFlow's eager ops.
CACHED_DATASET_OPS_VARIABLE = "KERAS_ESTIMATOR_CACHED_DATASET_OPS"


def _cached_dataset_ops() -> contextlib.AbstractContextManager[None]:
    """Within: the input_fn's datasets are made by cached traced functions.

    An input_fn called again and again (each `evaluate()` and `predict()`
    call calls it) makes the same datasets from new tensors; TensorFlow
    instantiates a function anew for every dataset op it runs eagerly
    (about 0.5 ms each), and none for a traced function it has called
    before (`eager_dataset_ops`). The datasets are the same. Not with an
    accelerator, nor when `KERAS_ESTIMATOR_CACHED_DATASET_OPS=0` is set.
    """
    setting = os.environ.get(CACHED_DATASET_OPS_VARIABLE, "1").strip().lower()
    if setting in ("0", "false", "no") or step_call.has_accelerators():
        return contextlib.nullcontext()
    return eager_dataset_ops.cached_dataset_ops(single_threaded=True)


# An input no larger than this, sliced from tensors in memory, is iterated
# without tf.data's static rewrites and autotuning (`make_iterator`).
SMALL_INPUT_BYTES = 1 << 20

_SMALL_INPUT_OPTIONS = tf.data.Options()
_SMALL_INPUT_OPTIONS.experimental_optimization.apply_default_optimizations = False
_SMALL_INPUT_OPTIONS.autotune.enabled = False

# repr(element_spec) -> (the traced function making such an iterator,
# whether it runs on the single-threaded executor).
_small_input_iterators: dict[str, tuple[Any, bool]] = {}
_MAX_TRACED_SPECS = 64


def make_iterator(dataset: tf.data.Dataset) -> Any:
    """An iterator over `dataset` for one `evaluate()` or `predict()` call.

    Every new dataset's first iterator goes through tf.data's static graph
    rewrites (map and batch fusion, map parallelization, prefetch injection,
    ...: about 2 ms of CPU, as much as a small model's single-example
    prediction), and autotuning starts a thread that destroying the
    iterator waits for. What they can gain on an input that only slices and
    batches numeric tensors already in memory (`dataset_sources`), of at
    most `SMALL_INPUT_BYTES`, is overlapping the copy of those bytes (a
    fraction of a millisecond) with the model's work: such an input is
    iterated without them, in one traced call that also sets the options
    (on TensorFlow's single-threaded executor where `step_call` allows it).
    The elements and their order are the same. Any other input, or one
    whose options the input_fn set, is iterated as TensorFlow does.
    """
    if not is_small_input(dataset):
        return iter(dataset)
    key = repr(dataset.element_spec)
    entry = _small_input_iterators.get(key)
    if entry is None:
        if len(_small_input_iterators) >= _MAX_TRACED_SPECS:
            _small_input_iterators.clear()
        make = tf.function(_small_input_iterator, autograph=False).get_concrete_function(
            tf.data.DatasetSpec(dataset.element_spec)
        )
        # On one thread where it can: no op of it waits for another.
        entry = _small_input_iterators[key] = (make, step_call.allows_single_thread(make.graph))
    return function_calls.call_traced(entry[0], dataset, single_threaded=entry[1])


def is_small_input(dataset: tf.data.Dataset) -> bool:
    """Whether `make_iterator` iterates `dataset` without tf.data's rewrites."""
    size = dataset_sources.in_memory_bytes(dataset)
    return size is not None and size <= SMALL_INPUT_BYTES


def small_input_iterator(dataset: tf.data.Dataset) -> Any:
    """The iterator `make_iterator` makes of a small input, made in the caller's trace."""
    return _small_input_iterator(dataset)


def _small_input_iterator(dataset: tf.data.Dataset) -> Any:
    return iter(dataset.with_options(_SMALL_INPUT_OPTIONS))


def _check_input_fn_parameters(
    input_fn: Callable[..., Any], candidates: dict[str, Any]
) -> None:
    """Refuses an input_fn with required parameters the Estimator cannot pass."""
    unfillable = fn_args.required_parameters_outside(input_fn, candidates)
    if unfillable:
        raise TypeError(
            f"input_fn {_short(input_fn)} requires parameters {unfillable}, but the "
            f"Estimator only passes {sorted(candidates)} (those it accepts). Bind "
            "the others first, e.g. input_fn=functools.partial(fn, "
            f"{unfillable[0]}=...) or lambda: fn(...)."
        )


# tf.data has no element without tensors, yet tf.estimator 2.15 ran a
# model_fn on an input_fn's `({}, None)` or `{}` (features it ignores). Such
# features travel as a dict holding only this key, which split_element
# turns back into the empty dict model_fn receives.
_NO_FEATURES_KEY = "__keras_estimator_no_features__"


def _placeholder_if_empty(features: Any) -> Any:
    if isinstance(features, dict) and not features:
        return {_NO_FEATURES_KEY: tf.zeros([0], tf.int8)}
    return features


def _tensor_element(result: Any) -> tuple[Any, tuple[tuple[str, Any], ...]]:
    """Each step's element of an input_fn's tensors, and its parts for messages."""
    if not isinstance(result, (tuple, list)):
        return _placeholder_if_empty(result), (("features", result),)
    features, labels = _tensors_as_tuple(result[0]), _tensors_as_tuple(result[1])
    if labels is None:
        # (features, None): labels-free elements, as a features-only
        # input_fn gives them (tf.data would carry the None as a spec
        # model_fn cannot take).
        return _placeholder_if_empty(features), (("features", features),)
    return (_placeholder_if_empty(features), labels), (
        ("features", features),
        ("labels", labels),
    )


def _computed_each_step(
    call: Callable[[], Any], seed: int | None, repeated: tf.data.Dataset
) -> tf.data.Dataset:
    """The input_fn's tensors computed anew for every element, as 2.15 ran them.

    tf.estimator 2.15 ran the input_fn's graph again at each step, so a
    random op among its tensors (`{'x': tf.random.uniform([4])}`) gave new
    values at every step, continuing one sequence from the call's start.
    Called eagerly, it gave one value, repeated. So an input_fn whose random
    ops ran is called once more, traced in the dataset's function, which
    runs at each element with the same seeds; if it cannot be traced, the
    eager values repeat, with a warning.
    """

    def element(_: Any) -> Any:
        return _tensor_element(call())[0]

    try:
        # The function's graph takes the seed the input_fn's call had.
        with graph_seeds.input_fn_seeds(seed):
            dataset = tf.data.Dataset.from_tensors(0).repeat().map(element)
    except Exception as error:  # noqa: BLE001  (any failure keeps the eager values)
        logger.warning(
            "input_fn's random ops give the same values at every step: its "
            "tensors are computed once, because calling it in a dataset's "
            "function failed (%s: %s). Return a tf.data.Dataset to get new "
            "values at each step.",
            type(error).__name__,
            error,
        )
        return repeated
    return dataset


def _repeated_tensors(
    result: Any, parts: tuple[tuple[str, Any], ...]
) -> tf.data.Dataset:
    """The input_fn's tensors (or arrays) repeated, or a TypeError naming the part."""
    if all(value is None for value in tf.nest.flatten(result)):
        # tf.data refuses an element without tensors with an InvalidArgumentError.
        raise TypeError(
            f"input_fn returned {_short(result)}, which holds no tensors. Return "
            "features (and labels) as tensors or arrays, e.g. ({'x': x}, y)."
        )
    try:
        return tf.data.Dataset.from_tensors(result).repeat()
    except (TypeError, ValueError, tf.errors.InvalidArgumentError) as error:
        field, value = _first_unconvertible(parts)
        raise TypeError(
            f"input_fn returned {field} that cannot be made into tensors: "
            f"{_short(value)} (type {type(value).__name__}): {error} Return "
            "tensors, numpy arrays of one dtype and a rectangular shape, or a "
            "tf.data.Dataset."
        ) from None


def _tensors_as_tuple(features: Any) -> Any:
    """A list of tensors as a tuple: tf.data would stack a list into one tensor.

    A list of numbers stays a list, one feature tensor.
    """
    if isinstance(features, list) and features and all(
        isinstance(v, (tf.Tensor, tf.SparseTensor, tf.RaggedTensor, np.ndarray, dict))
        for v in features
    ):
        return tuple(features)
    return features


def _first_unconvertible(parts: tuple[tuple[str, Any], ...]) -> tuple[str, Any]:
    """The first field (or dict entry) tf.data cannot convert, for messages."""
    for field, value in parts:
        entries = (
            [(f"{field}[{key!r}]", v) for key, v in value.items()]
            if isinstance(value, dict)
            else [(field, value)]
        )
        for name, entry in entries:
            try:
                tf.data.Dataset.from_tensors(entry)
            except (TypeError, ValueError, tf.errors.InvalidArgumentError):
                return name, entry
    return parts[0]


def split_element(element: Any) -> tuple[Any, Any]:
    """Splits one dataset element into (features, labels-or-None)."""
    if isinstance(element, tuple) and len(element) == 2:
        features, labels = element
    else:
        features, labels = element, None
    if isinstance(features, dict) and list(features) == [_NO_FEATURES_KEY]:
        features = {}
    return features, labels


def raise_if_feature_missing(error: KeyError, trained: Any, received: Any, mode: str) -> None:
    """Explains a model_fn's KeyError for a feature training had and `mode` lacks.

    Raises:
        ValueError: the missing key was a feature in training.
    """
    key = error.args[0] if error.args else None
    expected = _feature_dtypes(split_element(trained)[0])
    given = _feature_dtypes(split_element(received)[0])
    if isinstance(key, str) and key in expected and key not in given:
        raise ValueError(
            f"model_fn reads feature {key!r}, which input_fn for {mode} does not "
            f"give: it gives {sorted(given)}; training had {sorted(expected)}. "
            f"Give {mode} the features model_fn reads."
        ) from error


def _feature_dtypes(features: Any) -> dict[str, tf.DType]:
    if isinstance(features, dict):
        return {
            key: spec.dtype for key, spec in features.items() if hasattr(spec, "dtype")
        }
    return {"": features.dtype} if hasattr(features, "dtype") else {}


def _check_element(spec: Any) -> None:
    if isinstance(spec, tuple) and len(spec) != 2:
        # tf.estimator 2.15 raised ValueError for such an element too.
        raise ValueError(
            "input_fn should return (features, labels) as a len 2 tuple: "
            f"input_fn's dataset yields a tuple of {len(spec)} elements; make it "
            "yield (features, labels) or features alone (a tensor or a dict)."
        )
    _check_features(split_element(spec)[0])


def _check_features(features: Any) -> None:
    if isinstance(features, dict) and not _keys_of_one_kind(features):
        raise TypeError(
            "features' keys must all be strings (or all ints, as tf.estimator "
            f"2.15 took them); got keys {list(features)!r}. Name every feature "
            "by a string."
        )
    if not _is_feature_structure(features):
        raise TypeError(
            f"features must be a tensor, a dict of tensors or a tuple of "
            f"tensors, got "
            f"{type(features).__name__} ({_short(features)})."
        )
    if isinstance(features, dict):
        for key, value in features.items():
            # tf.data keeps a None as a NoneTensorSpec, which model_fn cannot
            # use; TensorFlow (2.21) has no public name for that class.
            if value is None or type(value).__name__ == "NoneTensorSpec":
                raise TypeError(
                    f"features[{key!r}] is None; input_fn must give a tensor or "
                    f"array for every key. Remove the key {key!r} or give it a "
                    "value."
                )


def _keys_of_one_kind(features: dict[Any, Any]) -> bool:
    return all(isinstance(k, str) for k in features) or all(
        isinstance(k, int) and not isinstance(k, bool) for k in features
    )


def _is_feature_structure(value: Any) -> bool:
    if isinstance(value, dict):
        return _keys_of_one_kind(value)
    # A tuple or list of tensors: the inputs of a multi-input Keras model,
    # or what a model_fn unpacks itself, as tf.estimator 2.15 passed them on.
    if isinstance(value, (tuple, list)):
        return bool(value) and all(_is_feature_structure(v) for v in value)
    # numpy arrays and Python numbers too: tf.estimator 2.15 took an
    # input_fn's arrays and numbers as features, alone, in a tuple or in a
    # list (the model_fn gets them as constant tensors here).
    return isinstance(
        value,
        (
            tf.Tensor,
            tf.SparseTensor,
            tf.RaggedTensor,
            tf.TypeSpec,
            tf.Variable,
            np.ndarray,
            np.generic,
            int,
            float,
        ),
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 120 else text[:117] + "..."
