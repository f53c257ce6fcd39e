"""`tf.estimator.export`: serving input receivers and export outputs.

Used with `Estimator.export_saved_model`: a serving_input_receiver_fn returns
a `ServingInputReceiver`; a model_fn names its signatures with
`EstimatorSpec(export_outputs={name: PredictOutput(...)})`.
"""

from keras_estimator._src.base import public_names as _public_names
from keras_estimator._src.base.export_outputs import (
    ClassificationOutput as ClassificationOutput,
)
from keras_estimator._src.base.export_outputs import EvalOutput as EvalOutput
from keras_estimator._src.base.export_outputs import ExportOutput as ExportOutput
from keras_estimator._src.base.export_outputs import PredictOutput as PredictOutput
from keras_estimator._src.base.export_outputs import (
    RegressionOutput as RegressionOutput,
)
from keras_estimator._src.base.serving_input import (
    ServingInputReceiver as ServingInputReceiver,
)
from keras_estimator._src.base.serving_input import (
    TensorServingInputReceiver as TensorServingInputReceiver,
)
from keras_estimator._src.base.serving_input import (
    build_parsing_serving_input_receiver_fn as build_parsing_serving_input_receiver_fn,
)
from keras_estimator._src.base.serving_input import (
    build_raw_serving_input_receiver_fn as build_raw_serving_input_receiver_fn,
)

# `X as X` marks each import above as a re-export; the list of names is
# the table in _src/base/public_names.py, which a test checks against them.
__all__ = _public_names.names_in(__name__)
