"""`pandas_input_fn`: tf.estimator 2.15's input_fn over a pandas DataFrame.

The contract is 2.15's: each DataFrame column becomes a feature keyed by the
column name (a 1-D tensor per batch); a Series `y` becomes the labels tensor, a
DataFrame `y` a dict of label tensors keyed by its column names; `y`'s index
must equal `x`'s. Batching, epochs and shuffling are `numpy_input_fn`'s (this
module hands the columns to its dataset builder): batches cross epoch
boundaries, `num_epochs=None` repeats forever with full batches, and every
epoch is a fresh permutation when `shuffle=True`.

pandas is an optional dependency (`pip install keras_estimator[pandas]`); it
is imported only when `pandas_input_fn` is called.
"""

from __future__ import annotations

import importlib
import itertools
from typing import Any

import numpy as np

from keras_estimator._src.io import numpy_io

_INSTALL_HINT = "pip install 'keras_estimator[pandas]' (or pip install pandas)"


def pandas_input_fn(
    x: Any,
    y: Any = None,
    batch_size: int = 128,
    num_epochs: int | None = 1,
    shuffle: bool | None = None,
    queue_capacity: int | None = 1000,
    num_threads: int = 1,
    target_column: str = "target",
) -> numpy_io.InputFn:
    """Returns an input_fn feeding the rows of a pandas DataFrame.

    Args:
        x: A `pandas.DataFrame`; each column is a feature named by the column.
        y: Labels: a `pandas.Series` (one labels tensor), a `pandas.DataFrame`
            (a dict of label tensors keyed by its columns), or `None` for
            features only. Its index must equal `x`'s.
        batch_size: Rows per batch, a positive integer.
        num_epochs: Passes over the data, a non-negative integer, or `None`
            to repeat forever.
        shuffle: Whether to shuffle the rows; must be given as a bool (True
            for training, False for evaluation and prediction).
        queue_capacity: Kept for compatibility: a positive integer or None,
            unused since every epoch is a full permutation.
        num_threads: Batches gathered in parallel, a positive integer; the
            order of batches does not depend on it.
        target_column: A string that must not name a column of `x` when `y`
            is a Series (2.15 stored the labels under that name).

    Returns:
        An input_fn returning a `tf.data.Dataset` of `(features, labels)`,
        or of features when `y` is None (in a TF1 graph, or called by another
        input_fn, the tensors of the next batch, as `numpy_input_fn`'s
        return them); like `numpy_input_fn`'s, it takes an
        optional `config` whose `tf_random_seed` seeds the shuffle.

    Raises:
        ImportError: pandas is not installed.
        TypeError: `x` is not a DataFrame; `y` is not a Series, DataFrame or
            None; `target_column` is not a string; a column name is not a
            string.
        ValueError: `shuffle` is not a bool; a count is not a positive
            integer (num_epochs: non-negative); `target_column` names a
            column of `x`; the indexes of `x` and `y` differ; `x` has no
            rows or no columns.
    """
    pd = _import_pandas()
    numpy_io.check_shuffle(shuffle)
    numpy_io.check_count("batch_size", batch_size)
    if num_epochs is not None:
        numpy_io.check_count("num_epochs", num_epochs, none_allowed=True, zero_allowed=True)
    if queue_capacity is not None:
        numpy_io.check_count("queue_capacity", queue_capacity)
    numpy_io.check_count("num_threads", num_threads)
    if not isinstance(target_column, str):
        raise TypeError(
            f"target_column must be a string type; got {target_column!r} of type "
            f"{type(target_column).__name__}."
        )
    columns = _columns(pd, x, y, target_column)
    settings = numpy_io.Settings(
        batch_size=int(batch_size),
        num_epochs=None if num_epochs is None else int(num_epochs),
        shuffle=bool(shuffle),
        num_parallel_calls=int(num_threads),
    )
    call_counter = itertools.count()

    def input_fn(config: Any = None) -> Any:
        """Builds the dataset; `config` is the Estimator's RunConfig, if any."""
        call_index = next(call_counter)
        seed = numpy_io.shuffle_seed(config, call_index) if settings.shuffle else None
        dataset = numpy_io.make_dataset(columns, settings, seed)
        if numpy_io.reads_tensors(config):
            return numpy_io.batch_tensors(dataset)
        return dataset

    return input_fn


def _import_pandas() -> Any:
    try:
        return importlib.import_module("pandas")
    except ImportError:
        raise ImportError(
            f"pandas_input_fn needs pandas, which is not installed: {_INSTALL_HINT}. "
            "Without pandas, use numpy_input_fn with a dict of numpy arrays."
        ) from None


def _columns(pd: Any, x: Any, y: Any, target_column: str) -> numpy_io.Columns:
    """The DataFrame's columns as numpy arrays, checked as 2.15 checked them."""
    if not isinstance(x, pd.DataFrame):
        raise TypeError(
            f"x must be a pandas DataFrame; got {type(x).__name__}. For numpy "
            "arrays use numpy_input_fn."
        )
    if x.shape[1] == 0 or x.shape[0] == 0:
        raise ValueError(
            f"x must have at least one row and one column; got a DataFrame of "
            f"shape {x.shape}."
        )
    features = _named_arrays("x", x)
    labels: np.ndarray | dict[str, np.ndarray] | None = None
    if y is not None:
        if not isinstance(y, (pd.Series, pd.DataFrame)):
            raise TypeError(
                f"y must be a pandas Series, a pandas DataFrame or None; got "
                f"{type(y).__name__}."
            )
        if isinstance(y, pd.Series) and target_column in x.columns:
            raise ValueError(
                f"Cannot use name {target_column!r} for target column: x already "
                f"has a column with that name (columns {list(x.columns)}). Pass "
                "another target_column."
            )
        if not np.array_equal(x.index, y.index):
            raise ValueError(
                f"Index for x and y are mismatched: y must have x's index.\n"
                f"Index for x: {x.index}\nIndex for y: {y.index}\nAlign them, e.g. "
                "y = y.loc[x.index], or reset both with .reset_index(drop=True)."
            )
        labels = (
            _named_arrays("y", y) if isinstance(y, pd.DataFrame) else _array("y", y)
        )
    return numpy_io.Columns(features, labels, len(x))


def _named_arrays(name: str, frame: Any) -> dict[str, np.ndarray]:
    bad = [column for column in frame.columns if not isinstance(column, str)]
    if bad:
        raise TypeError(
            f"The column names of {name} must be strings (feature or label "
            f"names); got {bad!r}. Rename them, e.g. "
            f"{name}.columns = {name}.columns.astype(str)."
        )
    if frame.columns.has_duplicates:
        duplicated = sorted(set(frame.columns[frame.columns.duplicated()]))
        raise ValueError(f"The column names of {name} repeat: {duplicated}.")
    return {
        column: _array(f"{name}[{column!r}]", frame[column]) for column in frame.columns
    }


def _array(name: str, series: Any) -> np.ndarray:
    array = series.to_numpy()
    if array.dtype != object:
        return array
    # pandas keeps strings as Python objects. Only all-string columns convert;
    # a missing value (None, NaN) must not become the string "nan".
    if all(isinstance(value, str) for value in array):
        return array.astype(str)
    if all(isinstance(value, bytes) for value in array):
        return array.astype(bytes)
    odd = next(v for v in array if not isinstance(v, (str, bytes)))
    raise TypeError(
        f"{name} holds Python objects that are not all strings (found {odd!r} "
        f"of type {type(odd).__name__}). Fill missing values (e.g. "
        ".fillna('')) or convert the column with .astype(...)."
    )
