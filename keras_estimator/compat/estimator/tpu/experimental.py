"""`tf.compat.v1.estimator.tpu.experimental`: `EmbeddingConfigSpec`.

Kept so programs import; TPUEstimator refuses a spec (TPU embedding tables
are not provided).
"""

from keras_estimator._src.base import public_names as _public_names
from keras_estimator._src.tpu.tpu_config import (
    EmbeddingConfigSpec as EmbeddingConfigSpec,
)

__all__ = _public_names.names_in(__name__)
