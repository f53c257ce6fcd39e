"""Stand-ins for TF1 APIs that TensorFlow 2.21 with Keras 3 no longer provides.

`keras_estimator.compat.layers` replaces `tf.compat.v1.layers`;
`keras_estimator.compat.estimator` mirrors `tf.compat.v1.estimator`;
`keras_estimator.compat.keras_estimator` is TensorFlow 2.15's
`tf.keras.estimator`.

Each is imported when first reached, so a program using `compat.layers`
does not import the whole v1 estimator namespace (its premade estimators,
TPUEstimator, inputs) with it.
"""

import typing as _typing

from keras_estimator._src.base import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from keras_estimator.compat import estimator as estimator
    from keras_estimator.compat import keras_estimator as keras_estimator
    from keras_estimator.compat import layers as layers

__all__ = ["estimator", "keras_estimator", "layers"]

__getattr__ = _lazy_exports.submodules_getattr(__name__, __all__)

__dir__ = _lazy_exports.listing(globals(), __all__)
