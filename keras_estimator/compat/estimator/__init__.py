"""`tf.compat.v1.estimator`: the TF1 estimator namespace, for this package.

Mirrors the names of tf.estimator 2.15's `tf.compat.v1.estimator` that this
package implements: mostly the same objects as the top-level
`keras_estimator` names (the v1 and v2 Estimator behave alike here), plus
the v1-only `inputs` (`numpy_input_fn`, `pandas_input_fn`) and `tpu`
(TPUEstimator). `keras_estimator.install()` makes
`tf.compat.v1.estimator` resolve to this module.

Its premade estimators are the v1 ones (v1 optimizers and slot names,
summed losses).
"""

# The v1 export namespace holds exactly the v2 one's names: the same module.
# The other names are imported from the private modules, not from
# `keras_estimator`, because the package's __init__ imports `compat` before it
# binds its own names.
from keras_estimator import export as export
from keras_estimator._src.base import missing_names as _missing_names
from keras_estimator._src.base import public_names as _public_names
from keras_estimator._src.base.estimator_spec import EstimatorSpec as EstimatorSpec
from keras_estimator._src.base.mode_keys import ModeKeys as ModeKeys
from keras_estimator._src.base.run_config import RunConfig as RunConfig
from keras_estimator._src.base.session_run_hook import SessionRunArgs as SessionRunArgs
from keras_estimator._src.base.session_run_hook import (
    SessionRunContext as SessionRunContext,
)
from keras_estimator._src.base.session_run_hook import SessionRunHook as SessionRunHook
from keras_estimator._src.base.session_run_hook import (
    SessionRunValues as SessionRunValues,
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
from keras_estimator._src.canned.v1_dnn_linear_combined import (
    DNNLinearCombinedClassifier as DNNLinearCombinedClassifier,
)
from keras_estimator._src.canned.v1_dnn_linear_combined import (
    DNNLinearCombinedEstimator as DNNLinearCombinedEstimator,
)
from keras_estimator._src.canned.v1_dnn_linear_combined import (
    DNNLinearCombinedRegressor as DNNLinearCombinedRegressor,
)
from keras_estimator._src.canned.v1_estimators import (
    BaselineClassifier as BaselineClassifier,
)
from keras_estimator._src.canned.v1_estimators import (
    BaselineEstimator as BaselineEstimator,
)
from keras_estimator._src.canned.v1_estimators import (
    BaselineRegressor as BaselineRegressor,
)
from keras_estimator._src.canned.v1_estimators import (
    DNNClassifier as DNNClassifier,
)
from keras_estimator._src.canned.v1_estimators import (
    DNNEstimator as DNNEstimator,
)
from keras_estimator._src.canned.v1_estimators import (
    DNNRegressor as DNNRegressor,
)
from keras_estimator._src.canned.v1_estimators import (
    LinearClassifier as LinearClassifier,
)
from keras_estimator._src.canned.v1_estimators import (
    LinearEstimator as LinearEstimator,
)
from keras_estimator._src.canned.v1_estimators import (
    LinearRegressor as LinearRegressor,
)
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
from keras_estimator._src.feature_column.v1_parsing_utils import (
    classifier_parse_example_spec as classifier_parse_example_spec,
)
from keras_estimator._src.feature_column.v1_parsing_utils import (
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
from keras_estimator._src.head.regression_heads import RegressionHead as RegressionHead
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
    SecondOrStepTimer as SecondOrStepTimer,
)
from keras_estimator._src.hooks.basic_hooks import StepCounterHook as StepCounterHook
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
from keras_estimator._src.training.train_and_evaluate import EvalSpec as EvalSpec
from keras_estimator._src.training.train_and_evaluate import TrainSpec as TrainSpec
from keras_estimator._src.training.train_and_evaluate import (
    train_and_evaluate as train_and_evaluate,
)
from keras_estimator.compat.estimator import experimental as experimental
from keras_estimator.compat.estimator import inputs as inputs
from keras_estimator.compat.estimator import tpu as tpu

# `X as X` marks each import above as a re-export; the list of names is
# the table in _src/base/public_names.py, which a test checks against them.

# tf.estimator 2.15 names not provided yet raise an AttributeError saying so.
__getattr__ = _missing_names.getattr_for(__name__)

__all__ = _public_names.names_in(__name__)
