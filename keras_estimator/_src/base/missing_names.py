"""tf.estimator 2.15 names this package does not provide yet, and what to do.

A program that reaches one (`tf.estimator.DNNClassifier` under `install()`,
`keras_estimator.LinearRegressor`) gets an AttributeError naming what it
was and the way forward, instead of Python's bare "module has no
attribute". Each public namespace module binds `__getattr__` to
`getattr_for(<its name>)`; any other missing name keeps Python's message.
"""

from __future__ import annotations

from collections.abc import Callable

_PREMADE = (
    "this premade estimator or head is not provided yet (the DNN, Linear, "
    "DNNLinearCombined and Baseline estimators and the single heads are). Meanwhile write a "
    "model_fn (feature columns through tf.compat.v1.feature_column.input_layer, "
    "Keras or tf.compat.v1.layers layers, a loss and an optimizer's minimize) "
    "and pass it to keras_estimator.Estimator(model_fn=...)"
)
_FEATURE_SPEC = (
    "not provided yet; build the spec with "
    "tf.feature_column.make_parse_example_spec(feature_columns) and add the "
    "label with tf.io.FixedLenFeature"
)
_TPU = (
    "TPUEstimator and tf.compat.v1.estimator.tpu are not provided: use "
    "keras_estimator.Estimator with "
    "RunConfig(train_distribute=tf.distribute.TPUStrategy(resolver)) and "
    "RunConfig(steps_per_loop=N) for iterations_per_loop"
)
_LATER = "not provided yet"

_PREMADE_NAMES = (
    "BaselineClassifier",
    "BaselineEstimator",
    "BaselineRegressor",
    "BinaryClassHead",
    "DNNClassifier",
    "DNNEstimator",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedEstimator",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "Head",
    "LinearClassifier",
    "LinearEstimator",
    "LinearRegressor",
    "LogisticRegressionHead",
    "MultiClassHead",
    "MultiHead",
    "MultiLabelHead",
    "PoissonRegressionHead",
    "RegressionHead",
)
_PROVIDED = (
    "BaselineClassifier",
    "BaselineEstimator",
    "BaselineRegressor",
    "BinaryClassHead",
    "DNNClassifier",
    "DNNEstimator",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedEstimator",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "Head",
    "LinearClassifier",
    "LinearEstimator",
    "LinearRegressor",
    "LogisticRegressionHead",
    "MultiClassHead",
    "PoissonRegressionHead",
    "RegressionHead",
)
_V1_CANNED = (
    "the tf.compat.v1.estimator premade estimators (v1 optimizers, summed "
    "losses) are not provided yet; tf.estimator's DNN, Linear and Baseline "
    "estimators are, and restore model_dirs their 2.15 versions wrote"
)
_TOP = {
    **{name: _PREMADE for name in _PREMADE_NAMES if name not in _PROVIDED},
    "classifier_parse_example_spec": _FEATURE_SPEC,
    "regressor_parse_example_spec": _FEATURE_SPEC,
}
_EXPERIMENTAL = {
    "LinearSDCA": _LATER,
    "RNNClassifier": _LATER,
    "RNNEstimator": _LATER,
    "call_logit_fn": _PREMADE,
}

# Public module -> {missing name: why and what to do}.
MISSING: dict[str, dict[str, str]] = {
    "keras_estimator": _TOP,
    "keras_estimator.experimental": _EXPERIMENTAL,
    "keras_estimator.compat.estimator": {
        **_TOP,
        **dict.fromkeys(
            [
                "BaselineClassifier",
                "BaselineEstimator",
                "BaselineRegressor",
                "DNNClassifier",
                "DNNEstimator",
                "DNNRegressor",
                "LinearClassifier",
                "LinearEstimator",
                "LinearRegressor",
            ],
            _V1_CANNED,
        ),
        "tpu": _TPU,
    },
    "keras_estimator.compat.estimator.experimental": {
        **_EXPERIMENTAL,
        "KMeans": _LATER,
        "dnn_logit_fn_builder": _PREMADE,
        "linear_logit_fn_builder": _PREMADE,
    },
    "keras_estimator.compat.estimator.inputs": {
        "pandas_input_fn": (
            "not provided yet; convert the DataFrame with "
            "dict(df) / df.to_numpy() and use numpy_input_fn, or "
            "tf.data.Dataset.from_tensor_slices((dict(df), labels))"
        ),
    },
}

# Which tf.estimator namespace each module stands for, for the message.
_TF_NAMES = {
    "keras_estimator": "tf.estimator",
    "keras_estimator.experimental": "tf.estimator.experimental",
    "keras_estimator.compat.estimator": "tf.compat.v1.estimator",
    "keras_estimator.compat.estimator.experimental": "tf.compat.v1.estimator.experimental",
    "keras_estimator.compat.estimator.inputs": "tf.compat.v1.estimator.inputs",
}


def getattr_for(module_name: str) -> Callable[[str], object]:
    """A module `__getattr__` explaining the 2.15 names `module_name` lacks."""
    missing = MISSING[module_name]
    tf_name = _TF_NAMES[module_name]

    def __getattr__(name: str) -> object:
        reason = missing.get(name)
        if reason is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        raise AttributeError(
            f"{tf_name}.{name} of tf.estimator 2.15 is not in {module_name}: "
            f"{reason}. docs/differences.md lists what is not provided."
        )

    return __getattr__
