"""Whether feature columns are TensorFlow's v2 columns, the test tf.estimator 2.15 made.

Checked on TensorFlow 2.21 (and 2.15, where it gives the same answers).

tf.estimator 2.15's V2 estimators (`tf.estimator.DNNClassifier`, ...) refused
columns that are not v2, and its `LinearSDCA` refused them in every class.
Most of `tf.compat.v1.feature_column`'s functions return the same v2 classes
as `tf.feature_column`; what is not v2 is `tf.compat.v1.feature_column.
shared_embedding_columns`' `_SharedEmbeddingColumn`, the old `_FeatureColumn`
classes of `tensorflow.python.feature_column.feature_column`, and a v2 column
built on one of those (its `_is_v2_column` is False). TensorFlow's own
`is_feature_column_v2` answers all of that; no public API does.

Private symbols touched: `tensorflow.python.feature_column.feature_column_v2.
is_feature_column_v2`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

TOUCHES = ("tensorflow.python.feature_column.feature_column_v2:is_feature_column_v2",)


def are_v2_columns(feature_columns: Iterable[Any]) -> bool:
    """True when every column is a v2 column (see the module)."""
    from tensorflow.python.feature_column import feature_column_v2

    return bool(feature_column_v2.is_feature_column_v2(list(feature_columns)))
