"""`tf.compat.v1.estimator.inputs`: input_fns over in-memory data.

`numpy_input_fn` is provided. tf.estimator 2.15 also had `pandas_input_fn`;
it is not provided here (pandas is not a dependency of this package).
"""

from keras_estimator._src.base import missing_names as _missing_names
from keras_estimator._src.base import public_names as _public_names
from keras_estimator._src.io.numpy_io import numpy_input_fn as numpy_input_fn

# tf.estimator 2.15 names not provided yet raise an AttributeError saying so.
__getattr__ = _missing_names.getattr_for(__name__)

__all__ = _public_names.names_in(__name__)
