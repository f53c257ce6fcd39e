"""`tf.compat.v1.estimator.experimental`: the names of `keras_estimator.experimental`.

The same objects as in the `tf.estimator.experimental` mirror, plus the v1
logit-fn builders (`dnn_logit_fn_builder`, `linear_logit_fn_builder`) and
`KMeans`; `RNNClassifier`/`RNNEstimator` are tf.estimator.experimental's only,
as in 2.15.
"""

from keras_estimator._src.base import missing_names as _missing_names
from keras_estimator._src.base import public_names as _public_names
from keras_estimator._src.canned.kmeans import KMeans as KMeans
from keras_estimator._src.canned.logit_fns import (
    dnn_logit_fn_builder as dnn_logit_fn_builder,
)
from keras_estimator._src.canned.logit_fns import (
    linear_logit_fn_builder as linear_logit_fn_builder,
)
from keras_estimator.experimental import (
    InMemoryEvaluatorHook as InMemoryEvaluatorHook,
)
from keras_estimator.experimental import LinearSDCA as LinearSDCA
from keras_estimator.experimental import (
    build_raw_supervised_input_receiver_fn as build_raw_supervised_input_receiver_fn,
)
from keras_estimator.experimental import call_logit_fn as call_logit_fn
from keras_estimator.experimental import (
    make_early_stopping_hook as make_early_stopping_hook,
)
from keras_estimator.experimental import (
    make_stop_at_checkpoint_step_hook as make_stop_at_checkpoint_step_hook,
)
from keras_estimator.experimental import stop_if_higher_hook as stop_if_higher_hook
from keras_estimator.experimental import stop_if_lower_hook as stop_if_lower_hook
from keras_estimator.experimental import (
    stop_if_no_decrease_hook as stop_if_no_decrease_hook,
)
from keras_estimator.experimental import (
    stop_if_no_increase_hook as stop_if_no_increase_hook,
)

# tf.estimator 2.15 names not provided yet raise an AttributeError saying so.
__getattr__ = _missing_names.getattr_for(__name__)

__all__ = _public_names.names_in(__name__)
