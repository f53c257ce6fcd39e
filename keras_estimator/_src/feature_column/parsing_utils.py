"""Parse specs for `tf.io.parse_example` that add a canned model's label and weight.

`classifier_parse_example_spec` and `regressor_parse_example_spec` are
tf.estimator 2.15's: the features' spec from
`tf.feature_column.make_parse_example_spec`, plus a `FixedLenFeature` for the
label and, when given, the weight column's spec. `v1_parsing_utils` holds
`tf.compat.v1.estimator`'s, which take the features' spec from
`tf.compat.v1.feature_column.make_parse_example_spec`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import tensorflow as tf

from keras_estimator._src.tf_internals import deprecation_notices


@functools.cache
def _numeric_column_type() -> type[Any]:
    # TensorFlow does not export the class: it is taken from an instance, made
    # at first use so that importing the package logs no deprecation warning.
    return type(tf.feature_column.numeric_column("x"))


def classifier_parse_example_spec(
    feature_columns: Iterable[Any],
    label_key: str,
    label_dtype: tf.DType = tf.int64,
    label_default: Any = None,
    weight_column: str | Any = None,
) -> dict[str, Any]:
    """Generates the `tf.io.parse_example` spec of a classifier's examples.

    Args:
        feature_columns: The model's feature columns (`FeatureColumn`s).
        label_key: The `tf.Example` key of the label.
        label_dtype: The label's dtype: `tf.int64` for class ids, `tf.string`
            with a `label_vocabulary`, `tf.float32` for binary classification.
        label_default: The label of examples that lack `label_key`, e.g. `0`
            when only positive examples carry the label.
        weight_column: A feature key, or a `tf.feature_column.numeric_column`,
            of the example weights.

    Returns:
        A dict mapping each feature key, the label key and the weight key to a
        `tf.io.FixedLenFeature` or `tf.io.VarLenFeature`; the label's is
        `FixedLenFeature((1,), label_dtype, label_default)`.

    Raises:
        ValueError: If `label_key` or the weight column's key is also a
            feature key, if `weight_column` is neither a string nor a
            `numeric_column`, or if a column is not a `FeatureColumn`.

    Example:
        >>> price = tf.feature_column.numeric_column("price")
        >>> spec = classifier_parse_example_spec([price], label_key="clicked")
        >>> spec["clicked"]
        FixedLenFeature(shape=(1,), dtype=tf.int64, default_value=None)
    """
    return with_label_and_weight(
        parse_example_spec(feature_columns),
        label_key,
        tf.io.FixedLenFeature((1,), label_dtype, label_default),
        weight_column,
    )


def regressor_parse_example_spec(
    feature_columns: Iterable[Any],
    label_key: str,
    label_dtype: tf.DType = tf.float32,
    label_default: Any = None,
    label_dimension: int = 1,
    weight_column: str | Any = None,
) -> dict[str, Any]:
    """Generates the `tf.io.parse_example` spec of a regressor's examples.

    Args:
        feature_columns: The model's feature columns (`FeatureColumn`s).
        label_key: The `tf.Example` key of the label.
        label_dtype: The label's dtype.
        label_default: The label of examples that lack `label_key`.
        label_dimension: The number of regression targets per example.
        weight_column: A feature key, or a `tf.feature_column.numeric_column`,
            of the example weights.

    Returns:
        A dict mapping each feature key, the label key and the weight key to a
        `tf.io.FixedLenFeature` or `tf.io.VarLenFeature`; the label's is
        `FixedLenFeature((label_dimension,), label_dtype, label_default)`.

    Raises:
        ValueError: As `classifier_parse_example_spec`.

    Example:
        >>> price = tf.feature_column.numeric_column("price")
        >>> spec = regressor_parse_example_spec([price], "y", label_dimension=2)
        >>> spec["y"]
        FixedLenFeature(shape=(2,), dtype=tf.float32, default_value=None)
    """
    return with_label_and_weight(
        parse_example_spec(feature_columns),
        label_key,
        tf.io.FixedLenFeature((label_dimension,), label_dtype, label_default),
        weight_column,
    )


def with_label_and_weight(
    spec: dict[str, Any], label_key: Any, label_spec: Any, weight_column: Any
) -> dict[str, Any]:
    """`spec` with the label's and the weight column's entries added."""
    if not isinstance(label_key, str):
        raise ValueError(
            f"label_key must be the string key of the label in tf.Example, got "
            f"{label_key!r}. Pass e.g. label_key='label'."
        )
    if label_key in spec:
        raise ValueError(
            f"label should not be used as feature. label_key: {label_key!r}, "
            f"features: {sorted(spec)}. Remove the column reading {label_key!r} "
            "from feature_columns, or give the label another key."
        )
    spec[label_key] = label_spec
    if weight_column is None:
        return spec
    if isinstance(weight_column, str):
        weight_column = tf.feature_column.numeric_column(weight_column)
    if not isinstance(weight_column, _numeric_column_type()):
        raise ValueError(
            f"weight_column should be an instance of "
            f"tf.feature_column.numeric_column or a string key; got "
            f"{type(weight_column).__name__}: {weight_column!r}. Pass the weight's "
            "feature key, e.g. weight_column='weight'."
        )
    if weight_column.key in spec:
        raise ValueError(
            f"weight_column should not be used as feature. weight_column: "
            f"{weight_column.key!r}, features: {sorted(spec)}. Remove the column "
            f"reading {weight_column.key!r} from feature_columns (and give the "
            "label a different key than the weight)."
        )
    spec.update(weight_column.parse_example_spec)
    return spec


def parse_example_spec(feature_columns: Any, v1: bool = False) -> dict[str, Any]:
    """`make_parse_example_spec` of the columns, without TensorFlow's notice.

    The package's own call: the deprecation notice would name this code, not
    the program's (`tf_internals/deprecation_notices.py`). `v1` takes
    `tf.compat.v1.feature_column`'s version, which accepts v1 columns.
    """
    module = tf.compat.v1.feature_column if v1 else tf.feature_column
    with deprecation_notices.quiet():
        return module.make_parse_example_spec(feature_columns)
