"""`tf.compat.v1.estimator.tpu`: TPUEstimator and its configuration.

`TPUEstimator` runs on this package's Estimator: with `use_tpu=False` on the
usual devices, with `use_tpu=True` on a `tf.distribute.TPUStrategy`. See
`keras_estimator._src.tpu.tpu_estimator` for what differs from 2.15.
"""

from keras_estimator._src.base import public_names as _public_names
from keras_estimator._src.tpu.tpu_config import (
    InputPipelineConfig as InputPipelineConfig,
)
from keras_estimator._src.tpu.tpu_config import RunConfig as RunConfig
from keras_estimator._src.tpu.tpu_config import TPUConfig as TPUConfig
from keras_estimator._src.tpu.tpu_estimator import TPUEstimator as TPUEstimator
from keras_estimator._src.tpu.tpu_estimator_spec import (
    TPUEstimatorSpec as TPUEstimatorSpec,
)
from keras_estimator.compat.estimator.tpu import experimental as experimental

__all__ = _public_names.names_in(__name__)
