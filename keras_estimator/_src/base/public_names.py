"""The one table of public names: which object each namespace exposes, and where.

Every public name of the package is one row: the name, the object it stands
for as `"module:attribute"` (or a module path, for a namespace's submodule),
and the namespaces it belongs to. A namespace is named by the public module
that serves it (`keras_estimator` serves `tf.estimator` after `install()`),
except `tf.compat.v1.train`, whose names `install()` replaces in place.

The public modules keep explicit `from ... import X as X` re-exports, which
IDEs and type checkers read; their `__all__` comes from `names_in(__name__)`,
and `install()` takes its lists from here. `tests/integration/
test_public_names.py` checks each public module's imports against this table,
so a name added in one place and not the other fails.

Objects are named by strings because this module sits at the bottom of the
package and may import nothing above it.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

# Namespaces, named by the public module that serves each.
ESTIMATOR = "keras_estimator"  # tf.estimator (and tf.compat.v2.estimator)
V1 = "keras_estimator.compat.estimator"  # tf.compat.v1.estimator
EXPERIMENTAL = "keras_estimator.experimental"  # tf.estimator.experimental
V1_EXPERIMENTAL = "keras_estimator.compat.estimator.experimental"
EXPORT = "keras_estimator.export"  # tf.estimator.export, and v1's: one module
V1_INPUTS = "keras_estimator.compat.estimator.inputs"
V1_TPU = "keras_estimator.compat.estimator.tpu"  # tf.compat.v1.estimator.tpu
V1_TPU_EXPERIMENTAL = "keras_estimator.compat.estimator.tpu.experimental"
TF_KERAS_ESTIMATOR = "keras_estimator.compat.keras_estimator"  # tf.keras.estimator
FEATURE_COLUMN = "keras_estimator.feature_column"  # Keras 3 feature-column layers
# Served by no module of this package: install() sets these names on
# TensorFlow's own `tf.compat.v1.train`.
V1_TRAIN = "tf.compat.v1.train"

NAMESPACES = (
    ESTIMATOR,
    V1,
    EXPERIMENTAL,
    V1_EXPERIMENTAL,
    EXPORT,
    V1_INPUTS,
    V1_TPU,
    V1_TPU_EXPERIMENTAL,
    TF_KERAS_ESTIMATOR,
    FEATURE_COLUMN,
    V1_TRAIN,
)


@dataclasses.dataclass(frozen=True)
class PublicName:
    """One public name.

    Attributes:
        name: The name in each of its namespaces.
        target: `"module:attribute"` of the object, or a module path when the
            name is a submodule of its namespaces.
        namespaces: The namespaces that hold the name (see `NAMESPACES`).
    """

    name: str
    target: str
    namespaces: tuple[str, ...]

    @property
    def is_module(self) -> bool:
        return ":" not in self.target

    def resolve(self) -> Any:
        """Imports and returns the object the name stands for."""
        module_name, _, attribute = self.target.partition(":")
        module = importlib.import_module(module_name)
        return getattr(module, attribute) if attribute else module


# Namespace groups shared by many rows.
_BOTH = (ESTIMATOR, V1)  # tf.estimator and tf.compat.v1.estimator
_HOOK = (ESTIMATOR, V1, V1_TRAIN)  # ... and tf.compat.v1.train
_EXPERIMENTAL = (EXPERIMENTAL, V1_EXPERIMENTAL)

_SRC = "keras_estimator._src"

# One row a line: (name, "module:attribute" or module, namespaces).
# fmt: off
TABLE: tuple[PublicName, ...] = tuple(
    PublicName(name, target, namespaces)
    for name, target, namespaces in (
        # tf.estimator / tf.compat.v1.estimator
        ("BestExporter", f"{_SRC}.export.best_exporter:BestExporter", _BOTH),
        # tf.estimator 2.8's BoostedTrees, in both namespaces as in 2.8.
        ("BoostedTreesClassifier", f"{_SRC}.canned.boosted_trees:BoostedTreesClassifier", _BOTH),
        ("BoostedTreesEstimator", f"{_SRC}.canned.boosted_trees:BoostedTreesEstimator", _BOTH),
        ("BoostedTreesRegressor", f"{_SRC}.canned.boosted_trees:BoostedTreesRegressor", _BOTH),
        ("BaselineClassifier", f"{_SRC}.canned.baseline:BaselineClassifier", (ESTIMATOR,)),
        ("BaselineEstimator", f"{_SRC}.canned.baseline:BaselineEstimator", (ESTIMATOR,)),
        ("BaselineRegressor", f"{_SRC}.canned.baseline:BaselineRegressor", (ESTIMATOR,)),
        ("BinaryClassHead", f"{_SRC}.head.classification_heads:BinaryClassHead", _BOTH),
        ("DNNClassifier", f"{_SRC}.canned.dnn:DNNClassifier", (ESTIMATOR,)),
        ("DNNEstimator", f"{_SRC}.canned.dnn:DNNEstimator", (ESTIMATOR,)),
        (
            "DNNLinearCombinedClassifier",
            f"{_SRC}.canned.dnn_linear_combined:DNNLinearCombinedClassifier",
            (ESTIMATOR,),
        ),
        (
            "DNNLinearCombinedEstimator",
            f"{_SRC}.canned.dnn_linear_combined:DNNLinearCombinedEstimator",
            (ESTIMATOR,),
        ),
        (
            "DNNLinearCombinedRegressor",
            f"{_SRC}.canned.dnn_linear_combined:DNNLinearCombinedRegressor",
            (ESTIMATOR,),
        ),
        ("DNNRegressor", f"{_SRC}.canned.dnn:DNNRegressor", (ESTIMATOR,)),
        ("Head", f"{_SRC}.head.base_head:Head", _BOTH),
        (
            "LogisticRegressionHead",
            f"{_SRC}.head.regression_heads:LogisticRegressionHead",
            _BOTH,
        ),
        ("LinearClassifier", f"{_SRC}.canned.linear:LinearClassifier", (ESTIMATOR,)),
        ("LinearEstimator", f"{_SRC}.canned.linear:LinearEstimator", (ESTIMATOR,)),
        ("LinearRegressor", f"{_SRC}.canned.linear:LinearRegressor", (ESTIMATOR,)),
        ("MultiClassHead", f"{_SRC}.head.classification_heads:MultiClassHead", _BOTH),
        (
            "PoissonRegressionHead",
            f"{_SRC}.head.regression_heads:PoissonRegressionHead",
            _BOTH,
        ),
        ("RegressionHead", f"{_SRC}.head.regression_heads:RegressionHead", _BOTH),
        ("MultiHead", f"{_SRC}.head.multi_head:MultiHead", _BOTH),
        ("MultiLabelHead", f"{_SRC}.head.multi_label_head:MultiLabelHead", _BOTH),
        ("classifier_parse_example_spec", f"{_SRC}.feature_column.parsing_utils:classifier_parse_example_spec", (ESTIMATOR,)),
        ("regressor_parse_example_spec", f"{_SRC}.feature_column.parsing_utils:regressor_parse_example_spec", (ESTIMATOR,)),
        # tf.compat.v1.estimator's own premade classes and parsing helpers.
        ("BaselineClassifier", f"{_SRC}.canned.v1_estimators:BaselineClassifier", (V1,)),
        ("BaselineEstimator", f"{_SRC}.canned.v1_estimators:BaselineEstimator", (V1,)),
        ("BaselineRegressor", f"{_SRC}.canned.v1_estimators:BaselineRegressor", (V1,)),
        ("DNNClassifier", f"{_SRC}.canned.v1_estimators:DNNClassifier", (V1,)),
        ("DNNEstimator", f"{_SRC}.canned.v1_estimators:DNNEstimator", (V1,)),
        ("DNNRegressor", f"{_SRC}.canned.v1_estimators:DNNRegressor", (V1,)),
        ("DNNLinearCombinedClassifier", f"{_SRC}.canned.v1_dnn_linear_combined:DNNLinearCombinedClassifier", (V1,)),
        ("DNNLinearCombinedEstimator", f"{_SRC}.canned.v1_dnn_linear_combined:DNNLinearCombinedEstimator", (V1,)),
        ("DNNLinearCombinedRegressor", f"{_SRC}.canned.v1_dnn_linear_combined:DNNLinearCombinedRegressor", (V1,)),
        ("LinearClassifier", f"{_SRC}.canned.v1_estimators:LinearClassifier", (V1,)),
        ("LinearEstimator", f"{_SRC}.canned.v1_estimators:LinearEstimator", (V1,)),
        ("LinearRegressor", f"{_SRC}.canned.v1_estimators:LinearRegressor", (V1,)),
        ("classifier_parse_example_spec", f"{_SRC}.feature_column.v1_parsing_utils:classifier_parse_example_spec", (V1,)),
        ("regressor_parse_example_spec", f"{_SRC}.feature_column.v1_parsing_utils:regressor_parse_example_spec", (V1,)),
        ("CheckpointSaverHook", f"{_SRC}.hooks.checkpoint_hooks:CheckpointSaverHook", _HOOK),
        ("CheckpointSaverListener", f"{_SRC}.hooks.checkpoint_hooks:CheckpointSaverListener", _HOOK),
        ("Estimator", f"{_SRC}.estimator.estimator:Estimator", _BOTH),
        ("EstimatorSpec", f"{_SRC}.base.estimator_spec:EstimatorSpec", _BOTH),
        ("EvalSpec", f"{_SRC}.training.train_and_evaluate:EvalSpec", _BOTH),
        ("Exporter", f"{_SRC}.export.exporters:Exporter", _BOTH),
        ("FeedFnHook", f"{_SRC}.hooks.basic_hooks:FeedFnHook", _HOOK),
        ("FinalExporter", f"{_SRC}.export.exporters:FinalExporter", _BOTH),
        ("FinalOpsHook", f"{_SRC}.hooks.basic_hooks:FinalOpsHook", _HOOK),
        ("GlobalStepWaiterHook", f"{_SRC}.hooks.basic_hooks:GlobalStepWaiterHook", _HOOK),
        ("LatestExporter", f"{_SRC}.export.exporters:LatestExporter", _BOTH),
        ("LoggingTensorHook", f"{_SRC}.hooks.basic_hooks:LoggingTensorHook", _HOOK),
        ("ModeKeys", f"{_SRC}.base.mode_keys:ModeKeys", _BOTH),
        ("NanLossDuringTrainingError", f"{_SRC}.hooks.basic_hooks:NanLossDuringTrainingError", _HOOK),
        ("NanTensorHook", f"{_SRC}.hooks.basic_hooks:NanTensorHook", _HOOK),
        ("ProfilerHook", f"{_SRC}.hooks.profiler_hook:ProfilerHook", _HOOK),
        ("RunConfig", f"{_SRC}.base.run_config:RunConfig", _BOTH),
        ("SecondOrStepTimer", f"{_SRC}.hooks.basic_hooks:SecondOrStepTimer", _HOOK),
        ("SessionRunArgs", f"{_SRC}.base.session_run_hook:SessionRunArgs", _HOOK),
        ("SessionRunContext", f"{_SRC}.base.session_run_hook:SessionRunContext", _HOOK),
        ("SessionRunHook", f"{_SRC}.base.session_run_hook:SessionRunHook", _HOOK),
        ("SessionRunValues", f"{_SRC}.base.session_run_hook:SessionRunValues", _HOOK),
        ("StepCounterHook", f"{_SRC}.hooks.basic_hooks:StepCounterHook", _HOOK),
        ("StopAtStepHook", f"{_SRC}.hooks.basic_hooks:StopAtStepHook", _HOOK),
        ("SummarySaverHook", f"{_SRC}.hooks.summary_saver_hook:SummarySaverHook", _HOOK),
        ("TrainSpec", f"{_SRC}.training.train_and_evaluate:TrainSpec", _BOTH),
        ("VocabInfo", f"{_SRC}.checkpoint.warm_start:VocabInfo", _BOTH),
        ("WarmStartSettings", f"{_SRC}.checkpoint.warm_start:WarmStartSettings", _BOTH),
        ("add_metrics", f"{_SRC}.estimator.extenders:add_metrics", _BOTH),
        ("train_and_evaluate", f"{_SRC}.training.train_and_evaluate:train_and_evaluate", _BOTH),
        # Submodules.
        ("experimental", EXPERIMENTAL, (ESTIMATOR,)),
        ("experimental", V1_EXPERIMENTAL, (V1,)),
        ("export", EXPORT, _BOTH),
        ("inputs", V1_INPUTS, (V1,)),
        ("tpu", V1_TPU, (V1,)),
        ("experimental", V1_TPU_EXPERIMENTAL, (V1_TPU,)),
        # Extensions of the top level, not in tf.estimator 2.15.
        ("HookCallback", f"{_SRC}.hooks.tf_stock_hooks:HookCallback", (ESTIMATOR,)),
        ("ObserverHook", f"{_SRC}.hooks.basic_hooks:ObserverHook", (ESTIMATOR,)),
        ("compat", "keras_estimator.compat", (ESTIMATOR,)),
        ("install", f"{_SRC}.zero_change.install:install", (ESTIMATOR,)),
        ("keras_model_from_estimator", f"{_SRC}.keras_interop.model_to_estimator:keras_model_from_estimator", (ESTIMATOR,)),
        ("keras_model_fn", f"{_SRC}.keras_interop.keras_model_fn:keras_model_fn", (ESTIMATOR,)),
        ("model_fn_to_keras", f"{_SRC}.keras_interop.model_to_estimator:model_fn_to_keras", (ESTIMATOR,)),
        ("model_to_estimator", f"{_SRC}.keras_interop.model_to_estimator:model_to_estimator", (ESTIMATOR, TF_KERAS_ESTIMATOR)),
        ("uninstall", f"{_SRC}.zero_change.install:uninstall", (ESTIMATOR,)),
        # tf.estimator.experimental / tf.compat.v1.estimator.experimental
        ("InMemoryEvaluatorHook", f"{_SRC}.estimator.evaluator_hook:InMemoryEvaluatorHook", _EXPERIMENTAL),
        ("build_raw_supervised_input_receiver_fn", f"{_SRC}.base.serving_input:build_raw_supervised_input_receiver_fn", _EXPERIMENTAL),
        ("make_early_stopping_hook", f"{_SRC}.estimator.early_stopping:make_early_stopping_hook", _EXPERIMENTAL),
        ("make_stop_at_checkpoint_step_hook", f"{_SRC}.estimator.early_stopping:make_stop_at_checkpoint_step_hook", _EXPERIMENTAL),
        ("stop_if_higher_hook", f"{_SRC}.estimator.early_stopping:stop_if_higher_hook", _EXPERIMENTAL),
        ("stop_if_lower_hook", f"{_SRC}.estimator.early_stopping:stop_if_lower_hook", _EXPERIMENTAL),
        ("stop_if_no_decrease_hook", f"{_SRC}.estimator.early_stopping:stop_if_no_decrease_hook", _EXPERIMENTAL),
        ("stop_if_no_increase_hook", f"{_SRC}.estimator.early_stopping:stop_if_no_increase_hook", _EXPERIMENTAL),
        ("call_logit_fn", f"{_SRC}.canned.logit_fns:call_logit_fn", _EXPERIMENTAL),
        ("LinearSDCA", f"{_SRC}.canned.linear_sdca:LinearSDCA", _EXPERIMENTAL),
        ("RNNClassifier", f"{_SRC}.canned.rnn:RNNClassifier", (EXPERIMENTAL,)),
        ("RNNEstimator", f"{_SRC}.canned.rnn:RNNEstimator", (EXPERIMENTAL,)),
        ("KMeans", f"{_SRC}.canned.kmeans:KMeans", (V1_EXPERIMENTAL,)),
        ("dnn_logit_fn_builder", f"{_SRC}.canned.logit_fns:dnn_logit_fn_builder", (V1_EXPERIMENTAL,)),
        ("linear_logit_fn_builder", f"{_SRC}.canned.logit_fns:linear_logit_fn_builder", (V1_EXPERIMENTAL,)),
        # Extensions of tf.estimator.experimental.
        ("multi_worker_strategy", f"{_SRC}.distribute.multi_worker:multi_worker_strategy", (EXPERIMENTAL,)),
        ("tpu_strategy", f"{_SRC}.distribute.tpu:tpu_strategy", (EXPERIMENTAL,)),
        # tf.estimator.export (also tf.compat.v1.estimator.export)
        ("ClassificationOutput", f"{_SRC}.base.export_outputs:ClassificationOutput", (EXPORT,)),
        ("EvalOutput", f"{_SRC}.base.export_outputs:EvalOutput", (EXPORT,)),
        ("ExportOutput", f"{_SRC}.base.export_outputs:ExportOutput", (EXPORT,)),
        ("PredictOutput", f"{_SRC}.base.export_outputs:PredictOutput", (EXPORT,)),
        ("RegressionOutput", f"{_SRC}.base.export_outputs:RegressionOutput", (EXPORT,)),
        ("ServingInputReceiver", f"{_SRC}.base.serving_input:ServingInputReceiver", (EXPORT,)),
        ("TensorServingInputReceiver", f"{_SRC}.base.serving_input:TensorServingInputReceiver", (EXPORT,)),
        ("build_parsing_serving_input_receiver_fn", f"{_SRC}.base.serving_input:build_parsing_serving_input_receiver_fn", (EXPORT,)),
        ("build_raw_serving_input_receiver_fn", f"{_SRC}.base.serving_input:build_raw_serving_input_receiver_fn", (EXPORT,)),
        # Keras 3 layers over tf.feature_column columns.
        ("DenseFeatures", f"{_SRC}.feature_column.dense_features:DenseFeatures", (FEATURE_COLUMN,)),
        # tf.compat.v1.estimator.inputs
        ("numpy_input_fn", f"{_SRC}.io.numpy_io:numpy_input_fn", (V1_INPUTS,)),
        ("pandas_input_fn", f"{_SRC}.io.pandas_io:pandas_input_fn", (V1_INPUTS,)),
        # tf.compat.v1.estimator.tpu
        ("InputPipelineConfig", f"{_SRC}.tpu.tpu_config:InputPipelineConfig", (V1_TPU,)),
        ("RunConfig", f"{_SRC}.tpu.tpu_config:RunConfig", (V1_TPU,)),
        ("TPUConfig", f"{_SRC}.tpu.tpu_config:TPUConfig", (V1_TPU,)),
        ("TPUEstimator", f"{_SRC}.tpu.tpu_estimator:TPUEstimator", (V1_TPU,)),
        ("TPUEstimatorSpec", f"{_SRC}.tpu.tpu_estimator_spec:TPUEstimatorSpec", (V1_TPU,)),
        ("EmbeddingConfigSpec", f"{_SRC}.tpu.tpu_config:EmbeddingConfigSpec", (V1_TPU_EXPERIMENTAL,)),
    )
)
# fmt: on


def entries_in(namespace: str) -> tuple[PublicName, ...]:
    """The rows of `namespace`, sorted by name."""
    if namespace not in NAMESPACES:
        raise ValueError(f"{namespace!r} is not one of {NAMESPACES}.")
    rows = [row for row in TABLE if namespace in row.namespaces]
    return tuple(sorted(rows, key=lambda row: row.name))


def names_in(namespace: str) -> list[str]:
    """The names of `namespace`, sorted: a public module's `__all__`."""
    return [row.name for row in entries_in(namespace)]


def submodules_of(namespace: str) -> dict[str, str]:
    """Name -> namespace, for the names of `namespace` that are namespaces too.

    These are what `import tensorflow.estimator.<name>` reaches after
    `install()`; `compat`, a module of this package only, is not one.
    """
    return {
        row.name: row.target
        for row in entries_in(namespace)
        if row.is_module and row.target in NAMESPACES
    }
