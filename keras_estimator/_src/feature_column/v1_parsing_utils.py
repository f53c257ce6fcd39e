"""`tf.compat.v1.estimator`'s parse-spec helpers.

The same as `parsing_utils`' except that the columns' spec comes from
`tf.compat.v1.feature_column.make_parse_example_spec`, as in tf.estimator 2.15.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import tensorflow as tf

from keras_estimator._src.feature_column.parsing_utils import (
    parse_example_spec,
    with_label_and_weight,
)


def classifier_parse_example_spec(
    feature_columns: Iterable[Any],
    label_key: str,
    label_dtype: tf.DType = tf.int64,
    label_default: Any = None,
    weight_column: str | Any = None,
) -> dict[str, Any]:
    """`tf.compat.v1.estimator.classifier_parse_example_spec`; see the v2 one."""
    return with_label_and_weight(
        parse_example_spec(feature_columns, v1=True),
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
    """`tf.compat.v1.estimator.regressor_parse_example_spec`; see the v2 one."""
    return with_label_and_weight(
        parse_example_spec(feature_columns, v1=True),
        label_key,
        tf.io.FixedLenFeature((label_dimension,), label_dtype, label_default),
        weight_column,
    )
