"""keras_estimator: the tf.estimator API on current TensorFlow and Keras 3.

Replace `tf.estimator` by `keras_estimator` in a program written for
tf.estimator 2.15; model_fn, input_fn, EstimatorSpec and RunConfig keep their
meaning, and training runs on Keras 3's trainer.
"""

from keras_estimator._backend_check import require_tensorflow_backend

require_tensorflow_backend()

from keras_estimator import compat  # noqa: E402
from keras_estimator._estimator import Estimator  # noqa: E402
from keras_estimator._estimator_spec import EstimatorSpec  # noqa: E402
from keras_estimator._mode_keys import ModeKeys  # noqa: E402
from keras_estimator._run_config import RunConfig  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "Estimator",
    "EstimatorSpec",
    "ModeKeys",
    "RunConfig",
    "compat",
]
