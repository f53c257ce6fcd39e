"""`tf.estimator.experimental`: early stopping and in-training evaluation hooks.

Also two extensions: `multi_worker_strategy`, MultiWorkerMirroredStrategy for
the TF_CONFIG cluster with bounded connection timeouts, and `tpu_strategy`, a
TPUStrategy with the TPU system set up.
"""

from keras_estimator._src.base import missing_names as _missing_names
from keras_estimator._src.base import public_names as _public_names
from keras_estimator._src.base.serving_input import (
    build_raw_supervised_input_receiver_fn as build_raw_supervised_input_receiver_fn,
)
from keras_estimator._src.canned.linear_sdca import LinearSDCA as LinearSDCA
from keras_estimator._src.canned.logit_fns import (
    call_logit_fn as call_logit_fn,
)
from keras_estimator._src.canned.rnn import RNNClassifier as RNNClassifier
from keras_estimator._src.canned.rnn import RNNEstimator as RNNEstimator
from keras_estimator._src.distribute.multi_worker import (
    multi_worker_strategy as multi_worker_strategy,
)
from keras_estimator._src.distribute.tpu import tpu_strategy as tpu_strategy
from keras_estimator._src.estimator.early_stopping import (
    make_early_stopping_hook as make_early_stopping_hook,
)
from keras_estimator._src.estimator.early_stopping import (
    make_stop_at_checkpoint_step_hook as make_stop_at_checkpoint_step_hook,
)
from keras_estimator._src.estimator.early_stopping import (
    stop_if_higher_hook as stop_if_higher_hook,
)
from keras_estimator._src.estimator.early_stopping import (
    stop_if_lower_hook as stop_if_lower_hook,
)
from keras_estimator._src.estimator.early_stopping import (
    stop_if_no_decrease_hook as stop_if_no_decrease_hook,
)
from keras_estimator._src.estimator.early_stopping import (
    stop_if_no_increase_hook as stop_if_no_increase_hook,
)
from keras_estimator._src.estimator.evaluator_hook import (
    InMemoryEvaluatorHook as InMemoryEvaluatorHook,
)

# `X as X` marks each import above as a re-export; the list of names is
# the table in _src/base/public_names.py, which a test checks against them.

# tf.estimator 2.15 names not provided yet raise an AttributeError saying so.
__getattr__ = _missing_names.getattr_for(__name__)

__all__ = _public_names.names_in(__name__)
