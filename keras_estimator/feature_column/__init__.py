"""Keras 3 layers over `tf.feature_column` columns.

`DenseFeatures` is tf.keras 2's layer of that name, which Keras 3 dropped:
a dict of features in, the columns' dense tensor out, embedding weights
owned and trained by the layer. `keras_estimator.install()` also makes it
`tf.keras.layers.DenseFeatures`.
"""

from keras_estimator._src.base import public_names as _public_names
from keras_estimator._src.feature_column.dense_features import (
    DenseFeatures as DenseFeatures,
)

# `X as X` marks the import above as a re-export; the list of names is the
# table in _src/base/public_names.py, which a test checks against it.

__all__ = _public_names.names_in(__name__)
