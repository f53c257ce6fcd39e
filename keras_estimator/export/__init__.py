"""`tf.estimator.export`: serving input receivers and export outputs.

Used with `Estimator.export_saved_model`: a serving_input_receiver_fn returns
a `ServingInputReceiver`; a model_fn names its signatures with
`EstimatorSpec(export_outputs={name: PredictOutput(...)})`.
"""

from keras_estimator._src.base.export_outputs import (
    ClassificationOutput,
    EvalOutput,
    ExportOutput,
    PredictOutput,
    RegressionOutput,
)
from keras_estimator._src.base.serving_input import (
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
