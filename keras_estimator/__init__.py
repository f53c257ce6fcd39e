"""keras_estimator: the tf.estimator API on current TensorFlow and Keras 3.

Replace `tf.estimator` by `keras_estimator` in a program written for
tf.estimator 2.15; model_fn, input_fn, EstimatorSpec and RunConfig keep their
meaning, and training runs on Keras 3's trainer.
"""

from keras_estimator._src.base.backend_check import require_tensorflow_backend

require_tensorflow_backend()

from keras_estimator import compat, experimental, export  # noqa: E402
from keras_estimator._src.base.estimator_spec import EstimatorSpec  # noqa: E402
from keras_estimator._src.base.mode_keys import ModeKeys  # noqa: E402
from keras_estimator._src.base.run_config import RunConfig  # noqa: E402
from keras_estimator._src.base.session_run_hook import (  # noqa: E402
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from keras_estimator._src.checkpoint.warm_start import VocabInfo, WarmStartSettings  # noqa: E402
from keras_estimator._src.engine.hook_callback import HookCallback  # noqa: E402
from keras_estimator._src.estimator.estimator import Estimator  # noqa: E402
from keras_estimator._src.estimator.extenders import add_metrics  # noqa: E402
from keras_estimator._src.export.best_exporter import BestExporter  # noqa: E402
from keras_estimator._src.export.exporters import (  # noqa: E402
    Exporter,
    FinalExporter,
    LatestExporter,
)
from keras_estimator._src.hooks.basic_hooks import (  # noqa: E402
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
from keras_estimator._src.hooks.checkpoint_hooks import (  # noqa: E402
    CheckpointSaverHook,
    CheckpointSaverListener,
)
from keras_estimator._src.hooks.profiler_hook import ProfilerHook  # noqa: E402
from keras_estimator._src.hooks.summary_saver_hook import SummarySaverHook  # noqa: E402
from keras_estimator._src.keras_interop.model_to_estimator import (  # noqa: E402
    keras_model_from_estimator,
    model_fn_to_keras,
    model_to_estimator,
)
from keras_estimator._src.training.train_and_evaluate import (  # noqa: E402
    EvalSpec,
    TrainSpec,
    train_and_evaluate,
)
from keras_estimator._src.zero_change.install import install, uninstall  # noqa: E402

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
