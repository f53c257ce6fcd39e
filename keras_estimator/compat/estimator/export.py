"""`tf.compat.v1.estimator.export`: the names of `keras_estimator.export`.

Serving input receivers and export outputs, the same objects as in the
`tf.estimator.export` mirror.
"""

from keras_estimator.export import (
    ClassificationOutput,
    EvalOutput,
    ExportOutput,
    PredictOutput,
    RegressionOutput,
    ServingInputReceiver,
    TensorServingInputReceiver,
    build_parsing_serving_input_receiver_fn,
    build_raw_serving_input_receiver_fn,
)

__all__ = [
    "ClassificationOutput",
    "EvalOutput",
    "ExportOutput",
    "PredictOutput",
    "RegressionOutput",
    "ServingInputReceiver",
    "TensorServingInputReceiver",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
]
