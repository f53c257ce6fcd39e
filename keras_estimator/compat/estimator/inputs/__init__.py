"""`tf.compat.v1.estimator.inputs`: input_fns over in-memory data.

`numpy_input_fn`, and `pandas_input_fn`, which needs the optional pandas
(`pip install keras_estimator[pandas]`).
"""

from keras_estimator._src.base import missing_names as _missing_names
from keras_estimator._src.base import public_names as _public_names
from keras_estimator._src.io.numpy_io import numpy_input_fn as numpy_input_fn
from keras_estimator._src.io.pandas_io import pandas_input_fn as pandas_input_fn

# tf.estimator 2.15 names not provided yet raise an AttributeError saying so.
__getattr__ = _missing_names.getattr_for(__name__)

__all__ = _public_names.names_in(__name__)
