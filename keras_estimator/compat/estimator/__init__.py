"""`tf.compat.v1.estimator`: the TF1 estimator namespace, for this package.

Mirrors the names of tf.estimator 2.15's `tf.compat.v1.estimator` that this
package implements: the same objects as the top-level `keras_estimator`
names (the v1 and v2 Estimator behave alike here), plus the v1-only
`inputs.numpy_input_fn`. `keras_estimator.install()` makes
`tf.compat.v1.estimator` resolve to this module.

Not provided: premade estimators (`DNNClassifier`, ...), `tpu`,
`inputs.pandas_input_fn` and the `*_parse_example_spec`
helpers.
"""

# The v1 export namespace holds exactly the v2 one's names: the same module.
# The other names are imported from the private modules, not from
# `keras_estimator`, because the package's __init__ imports `compat` before it
# binds its own names.
from keras_estimator import export
from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.base.run_config import RunConfig
from keras_estimator._src.base.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from keras_estimator._src.checkpoint.warm_start import VocabInfo, WarmStartSettings
from keras_estimator._src.estimator.estimator import Estimator
from keras_estimator._src.estimator.extenders import add_metrics
from keras_estimator._src.export.best_exporter import BestExporter
from keras_estimator._src.export.exporters import (
    Exporter,
    FinalExporter,
    LatestExporter,
)
from keras_estimator._src.hooks.basic_hooks import (
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
from keras_estimator._src.hooks.checkpoint_hooks import (
    CheckpointSaverHook,
    CheckpointSaverListener,
)
from keras_estimator._src.hooks.profiler_hook import ProfilerHook
from keras_estimator._src.hooks.summary_saver_hook import SummarySaverHook
from keras_estimator._src.training.train_and_evaluate import (
    EvalSpec,
    TrainSpec,
    train_and_evaluate,
)
from keras_estimator.compat.estimator import experimental, inputs

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
    "experimental",
    "export",
    "inputs",
    "train_and_evaluate",
]
