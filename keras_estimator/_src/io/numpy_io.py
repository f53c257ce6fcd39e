"""`numpy_input_fn`: tf.estimator 2.15's input_fn over in-memory numpy arrays.

tf.estimator 2.15 fed numpy arrays through a TF1 queue filled by Python
threads. This module owns the same contract on `tf.data`: the input_fn it
returns gives a dataset of `(features, labels)` batches (features alone when
there are no labels), in the same structure, dtypes and batching as 2.15:

* batches run across epoch boundaries, as rows left the queue: 150 rows in
  batches of 128 for 2 epochs give batches of 128, 128 and 44;
* `num_epochs=None` repeats forever and every batch is full (2.15 dequeued
  exactly `batch_size` rows); with a number of epochs the last batch keeps
  whatever rows are left;
* dict features keep their keys; a single array stays a single tensor;
* `num_epochs=0` gives no batch (2.15's queue closed at once).

Called by the Estimator (which passes `config`) or eagerly by a program, the
input_fn returns that dataset. Where 2.15's returned tensors a session reads
batch by batch, it returns the same: called in a TF1 graph (a program's own
`tf.Graph`, a `tf.compat.v1` session), or by another input_fn the Estimator
calls (`features, labels = numpy_input_fn(...)()` inside it), it returns
`(features, labels)` (features alone without `y`) read from a one-shot
iterator of the dataset: each evaluation takes the next batch, and the end
of the epochs raises `OutOfRangeError`, as 2.15's queue did. (Inside the
Estimator's call such tensors are read as any input_fn's iterator is:
`engine/v1_iterator_input.py`.)

Shuffling permutes all rows afresh each epoch. 2.15's queue only approximated
that (a random start row and a shuffle window of `queue_capacity` rows), so
`queue_capacity` is checked but not needed; `num_threads` sets how many
batches are gathered in parallel, order kept.
"""

from __future__ import annotations

import dataclasses
import itertools
import numbers
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator._src.tf_internals import v1_iterators

# What `numpy_input_fn` returns: called by the Estimator (which passes the
# RunConfig) or directly with no arguments; a dataset, or in a graph the
# tensors of its next batch.
InputFn = Callable[..., Any]


def numpy_input_fn(
    x: Any,
    y: Any = None,
    batch_size: int = 128,
    num_epochs: int | None = 1,
    shuffle: bool | None = None,
    queue_capacity: int = 1000,
    num_threads: int = 1,
) -> InputFn:
    """Returns an input_fn feeding a dict of numpy arrays (or one array).

    Args:
        x: A numpy array (one feature) or a dict of numpy arrays keyed by
            feature name; all arrays have the same first (row) dimension.
        y: Labels: a numpy array, a dict of numpy arrays, or `None` for
            features only (prediction).
        batch_size: Rows per batch, a positive integer.
        num_epochs: Passes over the data, a non-negative integer, or `None`
            to repeat forever.
        shuffle: Whether to shuffle the rows; must be given as a bool (True
            for training, False for evaluation and prediction).
        queue_capacity: Kept for compatibility: a positive integer, unused
            since every epoch is a full permutation.
        num_threads: Batches gathered in parallel, a positive integer; the
            order of batches does not depend on it.

    Returns:
        An input_fn returning a `tf.data.Dataset` of `(features, labels)`, or
        of features when `y` is None; in a TF1 graph, or called by another
        input_fn, the tensors of the next such batch, as 2.15's did
        (`batch_tensors`). It takes an optional `config`: when
        the Estimator passes a `RunConfig` with `tf_random_seed`, shuffling
        is seeded from it (each call of the input_fn draws a new, still
        reproducible order), as the graph seed seeded 2.15's shuffle queue.

    Raises:
        ValueError: `shuffle` is not a bool; `batch_size`,
            `queue_capacity` or `num_threads` is not a positive integer,
            or `num_epochs` a non-negative one; `x`
            or `y` is empty; arrays differ in length; `x` and `y` share a key.
        TypeError: `x` is not a dict or numpy array; a key is not a string.

    Example:
        >>> train_input_fn = numpy_input_fn(
        ...     {"age": ages, "height": heights}, labels,
        ...     batch_size=32, num_epochs=None, shuffle=True)  # doctest: +SKIP
        >>> estimator.train(train_input_fn, steps=1000)  # doctest: +SKIP
    """
    check_shuffle(shuffle)
    check_count("batch_size", batch_size)
    if num_epochs is not None:
        check_count("num_epochs", num_epochs, none_allowed=True, zero_allowed=True)
    check_count("queue_capacity", queue_capacity)
    check_count("num_threads", num_threads)
    # Checked now so a mistake points at this call; read again in input_fn
    # because 2.15 read `x` and `y` only when the input_fn ran.
    Columns.from_inputs(x, y)
    settings = Settings(
        batch_size=int(batch_size),
        num_epochs=None if num_epochs is None else int(num_epochs),
        shuffle=bool(shuffle),
        num_parallel_calls=int(num_threads),
    )
    call_counter = itertools.count()

    def input_fn(config: Any = None) -> Any:
        """Builds the dataset; `config` is the Estimator's RunConfig, if any."""
        seed = shuffle_seed(config, next(call_counter)) if settings.shuffle else None
        dataset = make_dataset(Columns.from_inputs(x, y), settings, seed)
        return batch_tensors(dataset) if reads_tensors(config) else dataset

    return input_fn


@dataclasses.dataclass(frozen=True)
class Settings:
    batch_size: int
    num_epochs: int | None
    shuffle: bool
    num_parallel_calls: int


@dataclasses.dataclass(frozen=True)
class Columns:
    """Validated inputs: features and labels in their final structure."""

    features: np.ndarray | dict[str, np.ndarray]
    labels: np.ndarray | dict[str, np.ndarray] | None
    num_rows: int

    @classmethod
    def from_inputs(cls, x: Any, y: Any) -> Columns:
        features = _features(x)
        labels = _labels(y, features)
        lengths = {len(array) for array in _arrays(features) + _arrays(labels)}
        if len(lengths) != 1:
            raise ValueError(
                "Length of tensors in x and y is mismatched: all arrays in x and "
                "y must have the same number of rows (first dimension). Shapes "
                f"in x: {_shapes(features)}; shapes in y: {_shapes(labels)}. "
                "Pass arrays with one row per example."
            )
        return cls(features, labels, lengths.pop())

    def element(self) -> Any:
        """The structure of one dataset element, holding numpy arrays."""
        return self.features if self.labels is None else (self.features, self.labels)


def _features(x: Any) -> np.ndarray | dict[str, np.ndarray]:
    if isinstance(x, Mapping):
        if not x:
            raise ValueError(
                "x cannot be an empty dict: pass a dict of numpy arrays keyed "
                "by feature name, or one numpy array."
            )
        return _sorted_columns("x", x)
    if isinstance(x, np.ndarray):
        if x.size == 0:
            raise ValueError(
                f"x cannot be an empty array (got shape {x.shape}); pass at "
                "least one row."
            )
        return _column("x", x)
    raise TypeError(
        f"x must be a dict or array; got {type(x).__name__}. Pass a dict of "
        "numpy arrays or one numpy array: convert it with np.asarray, or wrap "
        "columns in a dict keyed by feature name."
    )


def _labels(
    y: Any, features: np.ndarray | dict[str, np.ndarray]
) -> np.ndarray | dict[str, np.ndarray] | None:
    if y is None:
        return None
    if isinstance(y, Mapping):
        if not y:
            raise ValueError("y cannot be empty dict; pass None for no labels.")
        labels = _sorted_columns("y", y)
        shared = (
            sorted(set(labels) & set(features)) if isinstance(features, dict) else []
        )
        if shared:
            raise ValueError(
                f"{len(shared)} duplicate keys are found in both x and y: "
                f"{shared}. Rename the label keys or the feature keys."
            )
        return labels
    return _column("y", y)


def _sorted_columns(name: str, columns: Mapping[Any, Any]) -> dict[str, np.ndarray]:
    bad_keys = [key for key in columns if not isinstance(key, str)]
    if bad_keys:
        raise TypeError(
            f"The keys of {name} must be strings (feature or label names); got "
            f"{bad_keys!r}."
        )
    # Sorted as 2.15 sorted them, so features print and flatten in one order.
    return {key: _column(f"{name}[{key!r}]", columns[key]) for key in sorted(columns)}


def _column(name: str, value: Any) -> np.ndarray:
    array = np.asarray(value)
    if array.ndim == 0:
        raise ValueError(
            f"{name} must be an array with one row per example; got the scalar "
            f"{value!r}. Pass a 1-D or higher array."
        )
    return array


def _arrays(structure: np.ndarray | dict[str, np.ndarray] | None) -> list[np.ndarray]:
    if structure is None:
        return []
    if isinstance(structure, dict):
        return list(structure.values())
    return [structure]


def _shapes(structure: np.ndarray | dict[str, np.ndarray] | None) -> Any:
    if isinstance(structure, dict):
        return {key: array.shape for key, array in structure.items()}
    return None if structure is None else structure.shape


def reads_tensors(config: Any) -> bool:
    """Whether an input_fn called now returns batch tensors, as 2.15's did.

    Not when the Estimator calls it (it passes `config`), nor eagerly or in a
    `tf.function` of a TF2 program: a dataset serves those. In a TF1 graph,
    and inside another input_fn the Estimator calls (whose tf.compat.v1
    iterators it reads element by element), tensors.
    """
    if config is not None:
        return False
    if v1_iterators.redirected():
        return True
    return not tf.executing_eagerly() and not tf.inside_function()


def batch_tensors(dataset: tf.data.Dataset) -> Any:
    """The next batch of `dataset` as graph tensors, OutOfRange at its end."""
    return tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()


def check_shuffle(shuffle: Any) -> None:
    if not isinstance(shuffle, (bool, np.bool_)):
        # The first words are 2.15's.
        raise ValueError(
            f"shuffle must be provided and explicitly set as boolean; got "
            f"{shuffle!r}. Use shuffle=True for training and shuffle=False for "
            "evaluation and prediction."
        )


def check_count(
    name: str, value: Any, none_allowed: bool = False, zero_allowed: bool = False
) -> None:
    is_integer = isinstance(value, numbers.Integral) and not isinstance(
        value, (bool, np.bool_)
    )
    if not is_integer or value < (0 if zero_allowed else 1):
        kind = "non-negative" if zero_allowed else "positive"
        also = " or None (repeat forever)" if none_allowed else ""
        raise ValueError(f"{name} must be a {kind} integer{also}; got {value!r}.")


def shuffle_seed(config: Any, call_index: int) -> int | None:
    """A seed from RunConfig.tf_random_seed, distinct for each input_fn call.

    Without a RunConfig seed, None lets tf.data use TensorFlow's global seed
    (or none). A distinct seed per call keeps repeated `train()` calls from
    replaying the same order, while a rerun of the program replays all.
    """
    base = getattr(config, "tf_random_seed", None)
    if base is None:
        return None
    entropy = [int(base) % 2**32, call_index]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0])


def make_dataset(
    columns: Columns, settings: Settings, seed: int | None
) -> tf.data.Dataset:
    tensors = tf.nest.map_structure(_to_tensor, columns.element())
    # Batches of row indices, gathered from the tensors: shuffling and
    # repeating indices costs 8 bytes a row whatever the rows hold.
    indices = tf.data.Dataset.range(columns.num_rows)
    if settings.shuffle and seed is not None:
        # 2.15's shuffling queue took its seed from the graph's count, before
        # the model_fn's random ops: take it, so theirs come after, as there.
        tf.compat.v1.get_seed(None)
    if settings.shuffle:
        indices = indices.shuffle(
            columns.num_rows, seed=seed, reshuffle_each_iteration=True
        )
    # Repeating before batching lets batches cross epochs, as the queue did.
    indices = indices.repeat(settings.num_epochs).batch(
        settings.batch_size,
        # Endless input has no last batch; dropping "remainders" just gives
        # the batch dimension a static size, as 2.15's dequeue_many did.
        drop_remainder=settings.num_epochs is None,
    )

    def gather(batch_indices: tf.Tensor) -> Any:
        return tf.nest.map_structure(
            lambda tensor: tf.gather(tensor, batch_indices), tensors
        )

    return indices.map(gather, num_parallel_calls=settings.num_parallel_calls)


def _to_tensor(array: np.ndarray) -> tf.Tensor:
    try:
        return tf.convert_to_tensor(array)
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"Cannot feed an array of dtype {array.dtype} and shape {array.shape} "
            f"to TensorFlow ({error}). Use numeric, bool or string arrays."
        ) from error
