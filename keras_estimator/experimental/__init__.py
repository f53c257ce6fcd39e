"""`tf.estimator.experimental`: early stopping and in-training evaluation hooks.

Also two extensions: `multi_worker_strategy`, MultiWorkerMirroredStrategy for
the TF_CONFIG cluster with bounded connection timeouts, and `tpu_strategy`, a
TPUStrategy with the TPU system set up.
"""

from keras_estimator._src.base.serving_input import (
    build_raw_supervised_input_receiver_fn,
)
from keras_estimator._src.distribute.multi_worker import multi_worker_strategy
from keras_estimator._src.distribute.tpu import tpu_strategy
from keras_estimator._src.hooks.early_stopping import (
    make_early_stopping_hook,
    make_stop_at_checkpoint_step_hook,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from keras_estimator._src.hooks.evaluator_hook import InMemoryEvaluatorHook

__all__ = [
    "InMemoryEvaluatorHook",
    "build_raw_supervised_input_receiver_fn",
    "make_early_stopping_hook",
    "make_stop_at_checkpoint_step_hook",
    "multi_worker_strategy",
    "stop_if_higher_hook",
    "stop_if_lower_hook",
    "stop_if_no_decrease_hook",
    "stop_if_no_increase_hook",
    "tpu_strategy",
]
