"""TensorFlow's own TF1 SessionRunHook classes, for hooks a TF1 session runs.

Checked on TensorFlow 2.21.

`install()` makes `tf.compat.v1.train.LoggingTensorHook` and the other stock
hooks this package's classes, as tf.estimator 2.15's were those very
classes; a program that hands one to `tf.compat.v1.train.MonitoredSession`
in a graph gets TensorFlow's class behind it (`hooks/v1_session.py`). The
public names no longer lead to TensorFlow's classes once installed, so they
are taken from the module that defines them.
"""

from __future__ import annotations

from typing import Any

TOUCHES = (
    "tensorflow.python.training.basic_session_run_hooks:LoggingTensorHook",
    "tensorflow.python.training.basic_session_run_hooks:StopAtStepHook",
    "tensorflow.python.training.basic_session_run_hooks:CheckpointSaverHook",
    "tensorflow.python.training.basic_session_run_hooks:StepCounterHook",
    "tensorflow.python.training.basic_session_run_hooks:NanTensorHook",
    "tensorflow.python.training.basic_session_run_hooks:NanLossDuringTrainingError",
    "tensorflow.python.training.basic_session_run_hooks:SummarySaverHook",
    "tensorflow.python.training.basic_session_run_hooks:GlobalStepWaiterHook",
    "tensorflow.python.training.basic_session_run_hooks:FinalOpsHook",
    "tensorflow.python.training.basic_session_run_hooks:FeedFnHook",
    "tensorflow.python.training.basic_session_run_hooks:ProfilerHook",
)


def tf_hook_class(name: str) -> Any:
    """TensorFlow's class `name` of `tf.compat.v1.train` (as before `install()`)."""
    from tensorflow.python.training import basic_session_run_hooks

    return getattr(basic_session_run_hooks, name)


def tf_nan_loss_error() -> type[Exception]:
    """The error TensorFlow's NanTensorHook raises."""
    from tensorflow.python.training import basic_session_run_hooks

    error: type[Exception] = basic_session_run_hooks.NanLossDuringTrainingError
    return error
