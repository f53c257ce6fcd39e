"""keras_estimator: the tf.estimator API on current TensorFlow and Keras 3.

Replace `tf.estimator` by `keras_estimator` in a program written for
tf.estimator 2.15; model_fn, input_fn, EstimatorSpec and RunConfig keep their
meaning, and training runs on Keras 3's trainer.
"""

from keras_estimator._backend_check import require_tensorflow_backend

require_tensorflow_backend()

from keras_estimator import compat, experimental, export  # noqa: E402
from keras_estimator._basic_hooks import (  # noqa: E402
    FeedFnHook,
    FinalOpsHook,
    GlobalStepWaiterHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    SecondOrStepTimer,
    StepCounterHook,
    StopAtStepHook,
)
from keras_estimator._best_exporter import BestExporter  # noqa: E402
from keras_estimator._checkpoint_hooks import (  # noqa: E402
    CheckpointSaverHook,
    CheckpointSaverListener,
)
from keras_estimator._estimator import Estimator  # noqa: E402
from keras_estimator._estimator_spec import EstimatorSpec  # noqa: E402
from keras_estimator._exporter import (  # noqa: E402
    Exporter,
    FinalExporter,
    LatestExporter,
)
from keras_estimator._extenders import add_metrics  # noqa: E402
from keras_estimator._hook_callback import HookCallback  # noqa: E402
from keras_estimator._install import install, uninstall  # noqa: E402
from keras_estimator._mode_keys import ModeKeys  # noqa: E402
from keras_estimator._model_to_estimator import (  # noqa: E402
    keras_model_from_estimator,
    model_fn_to_keras,
    model_to_estimator,
)
from keras_estimator._profiler_hook import ProfilerHook  # noqa: E402
from keras_estimator._run_config import RunConfig  # noqa: E402
from keras_estimator._session_run_hook import (  # noqa: E402
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from keras_estimator._summaries import SummarySaverHook  # noqa: E402
from keras_estimator._training import (  # noqa: E402
    EvalSpec,
    TrainSpec,
    train_and_evaluate,
)
from keras_estimator._warm_start import VocabInfo, WarmStartSettings  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "BestExporter",
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "Estimator",
    "EstimatorSpec",
    "EvalSpec",
    "Exporter",
    "FeedFnHook",
    "FinalExporter",
    "FinalOpsHook",
    "GlobalStepWaiterHook",
    "HookCallback",
    "LatestExporter",
    "LoggingTensorHook",
    "ModeKeys",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "ProfilerHook",
    "RunConfig",
    "SecondOrStepTimer",
    "SessionRunArgs",
    "SessionRunContext",
    "SessionRunHook",
    "SessionRunValues",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
    "TrainSpec",
    "VocabInfo",
    "WarmStartSettings",
    "add_metrics",
    "compat",
    "experimental",
    "export",
    "install",
    "keras_model_from_estimator",
    "model_fn_to_keras",
    "model_to_estimator",
    "train_and_evaluate",
    "uninstall",
]
