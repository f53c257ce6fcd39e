"""keras_estimator: the tf.estimator API on current TensorFlow and Keras 3.

Replace `tf.estimator` by `keras_estimator` in a program written for
tf.estimator 2.15; model_fn, input_fn, EstimatorSpec and RunConfig keep their
meaning, and training runs on Keras 3's trainer.

Importing the package imports neither TensorFlow nor Keras: each name below
loads its module when a program first uses it. A Keras backend other than
TensorFlow (from KERAS_BACKEND or keras.json) is refused on import.
"""

import typing

from keras_estimator._src.base import backend_check as _backend_check
from keras_estimator._src.base import lazy_exports as _lazy_exports
from keras_estimator._src.base import package_logger as _package_logger
from keras_estimator._src.base import public_names as _public_names

# Read as Keras reads it (environment, keras.json), without importing Keras.
_backend_check.require_tensorflow_backend()

# The package's logs go where tf.estimator's went: TensorFlow's logger.
_package_logger.route_into_tensorflow_logger()

# `X as X` marks each import below as a re-export for type checkers and IDEs;
# at run time the same names come from the table in
# _src/base/public_names.py (a test checks the two against each other).
if typing.TYPE_CHECKING:
    from keras_estimator import compat as compat
    from keras_estimator import experimental as experimental
    from keras_estimator import export as export
    from keras_estimator._src.base.estimator_spec import EstimatorSpec as EstimatorSpec
    from keras_estimator._src.base.mode_keys import ModeKeys as ModeKeys
    from keras_estimator._src.base.run_config import RunConfig as RunConfig
    from keras_estimator._src.base.session_run_hook import (
        SessionRunArgs as SessionRunArgs,
    )
    from keras_estimator._src.base.session_run_hook import (
        SessionRunContext as SessionRunContext,
    )
    from keras_estimator._src.base.session_run_hook import (
        SessionRunHook as SessionRunHook,
    )
    from keras_estimator._src.base.session_run_hook import (
        SessionRunValues as SessionRunValues,
    )
    from keras_estimator._src.canned.baseline import (
        BaselineClassifier as BaselineClassifier,
    )
    from keras_estimator._src.canned.baseline import (
        BaselineEstimator as BaselineEstimator,
    )
    from keras_estimator._src.canned.baseline import (
        BaselineRegressor as BaselineRegressor,
    )
    from keras_estimator._src.canned.boosted_trees import (
        BoostedTreesClassifier as BoostedTreesClassifier,
    )
    from keras_estimator._src.canned.boosted_trees import (
        BoostedTreesEstimator as BoostedTreesEstimator,
    )
    from keras_estimator._src.canned.boosted_trees import (
        BoostedTreesRegressor as BoostedTreesRegressor,
    )
    from keras_estimator._src.canned.dnn import DNNClassifier as DNNClassifier
    from keras_estimator._src.canned.dnn import DNNEstimator as DNNEstimator
    from keras_estimator._src.canned.dnn import DNNRegressor as DNNRegressor
    from keras_estimator._src.canned.dnn_linear_combined import (
        DNNLinearCombinedClassifier as DNNLinearCombinedClassifier,
    )
    from keras_estimator._src.canned.dnn_linear_combined import (
        DNNLinearCombinedEstimator as DNNLinearCombinedEstimator,
    )
    from keras_estimator._src.canned.dnn_linear_combined import (
        DNNLinearCombinedRegressor as DNNLinearCombinedRegressor,
    )
    from keras_estimator._src.canned.linear import LinearClassifier as LinearClassifier
    from keras_estimator._src.canned.linear import LinearEstimator as LinearEstimator
    from keras_estimator._src.canned.linear import LinearRegressor as LinearRegressor
    from keras_estimator._src.checkpoint.warm_start import VocabInfo as VocabInfo
    from keras_estimator._src.checkpoint.warm_start import (
        WarmStartSettings as WarmStartSettings,
    )
    from keras_estimator._src.estimator.estimator import Estimator as Estimator
    from keras_estimator._src.estimator.extenders import add_metrics as add_metrics
    from keras_estimator._src.export.best_exporter import BestExporter as BestExporter
    from keras_estimator._src.export.exporters import Exporter as Exporter
    from keras_estimator._src.export.exporters import FinalExporter as FinalExporter
    from keras_estimator._src.export.exporters import LatestExporter as LatestExporter
    from keras_estimator._src.feature_column.parsing_utils import (
        classifier_parse_example_spec as classifier_parse_example_spec,
    )
    from keras_estimator._src.feature_column.parsing_utils import (
        regressor_parse_example_spec as regressor_parse_example_spec,
    )
    from keras_estimator._src.head.base_head import Head as Head
    from keras_estimator._src.head.classification_heads import (
        BinaryClassHead as BinaryClassHead,
    )
    from keras_estimator._src.head.classification_heads import (
        MultiClassHead as MultiClassHead,
    )
    from keras_estimator._src.head.multi_head import (
        MultiHead as MultiHead,
    )
    from keras_estimator._src.head.multi_label_head import (
        MultiLabelHead as MultiLabelHead,
    )
    from keras_estimator._src.head.regression_heads import (
        LogisticRegressionHead as LogisticRegressionHead,
    )
    from keras_estimator._src.head.regression_heads import (
        PoissonRegressionHead as PoissonRegressionHead,
    )
    from keras_estimator._src.head.regression_heads import (
        RegressionHead as RegressionHead,
    )
    from keras_estimator._src.hooks.basic_hooks import FeedFnHook as FeedFnHook
    from keras_estimator._src.hooks.basic_hooks import FinalOpsHook as FinalOpsHook
    from keras_estimator._src.hooks.basic_hooks import (
        GlobalStepWaiterHook as GlobalStepWaiterHook,
    )
    from keras_estimator._src.hooks.basic_hooks import (
        LoggingTensorHook as LoggingTensorHook,
    )
    from keras_estimator._src.hooks.basic_hooks import (
        NanLossDuringTrainingError as NanLossDuringTrainingError,
    )
    from keras_estimator._src.hooks.basic_hooks import NanTensorHook as NanTensorHook
    from keras_estimator._src.hooks.basic_hooks import (
        ObserverHook as ObserverHook,
    )
    from keras_estimator._src.hooks.basic_hooks import (
        SecondOrStepTimer as SecondOrStepTimer,
    )
    from keras_estimator._src.hooks.basic_hooks import (
        StepCounterHook as StepCounterHook,
    )
    from keras_estimator._src.hooks.basic_hooks import StopAtStepHook as StopAtStepHook
    from keras_estimator._src.hooks.checkpoint_hooks import (
        CheckpointSaverHook as CheckpointSaverHook,
    )
    from keras_estimator._src.hooks.checkpoint_hooks import (
        CheckpointSaverListener as CheckpointSaverListener,
    )
    from keras_estimator._src.hooks.profiler_hook import ProfilerHook as ProfilerHook
    from keras_estimator._src.hooks.summary_saver_hook import (
        SummarySaverHook as SummarySaverHook,
    )
    from keras_estimator._src.hooks.tf_stock_hooks import HookCallback as HookCallback
    from keras_estimator._src.keras_interop.keras_model_fn import (
        keras_model_fn as keras_model_fn,
    )
    from keras_estimator._src.keras_interop.model_to_estimator import (
        keras_model_from_estimator as keras_model_from_estimator,
    )
    from keras_estimator._src.keras_interop.model_to_estimator import (
        model_fn_to_keras as model_fn_to_keras,
    )
    from keras_estimator._src.keras_interop.model_to_estimator import (
        model_to_estimator as model_to_estimator,
    )
    from keras_estimator._src.training.train_and_evaluate import EvalSpec as EvalSpec
    from keras_estimator._src.training.train_and_evaluate import TrainSpec as TrainSpec
    from keras_estimator._src.training.train_and_evaluate import (
        train_and_evaluate as train_and_evaluate,
    )
    from keras_estimator._src.zero_change.install import install as install
    from keras_estimator._src.zero_change.install import uninstall as uninstall

__version__ = "0.1.0"

# Public names load on first use; tf.estimator 2.15 names not provided raise
# an AttributeError saying so.
__getattr__ = _lazy_exports.getattr_for(__name__)
__all__ = _public_names.names_in(__name__)
__dir__ = _lazy_exports.dir_for(__name__, globals())
