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

import os
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
    "tensorflow.python.training.basic_session_run_hooks:StopAtStepHook()._num_steps",
    "tensorflow.python.training.basic_session_run_hooks:StopAtStepHook()._last_step",
    "tensorflow.python.training.basic_session_run_hooks:StepCounterHook()._timer._every_steps",
    "tensorflow.python.training.basic_session_run_hooks:StepCounterHook()._timer._every_secs",
    "tensorflow.python.training.basic_session_run_hooks:StepCounterHook()._output_dir",
    "tensorflow.python.training.basic_session_run_hooks:StepCounterHook()._summary_writer",
    "tensorflow.python.training.basic_session_run_hooks:SummarySaverHook()._summary_op",
    "tensorflow.python.training.basic_session_run_hooks:SummarySaverHook()._summary_writer",
    "tensorflow.python.training.basic_session_run_hooks:SummarySaverHook()._output_dir",
    "tensorflow.python.training.basic_session_run_hooks:SummarySaverHook()._scaffold",
    "tensorflow.python.training.basic_session_run_hooks:SummarySaverHook()._timer",
    "tensorflow.python.training.basic_session_run_hooks:CheckpointSaverHook()._checkpoint_dir",
    "tensorflow.python.training.basic_session_run_hooks:CheckpointSaverHook()._save_path",
    "tensorflow.python.training.basic_session_run_hooks:CheckpointSaverHook()._saver",
    "tensorflow.python.training.basic_session_run_hooks:CheckpointSaverHook()._scaffold",
    "tensorflow.python.training.basic_session_run_hooks:CheckpointSaverHook()._listeners",
    "tensorflow.python.training.basic_session_run_hooks:CheckpointSaverHook()._save_graph_def",
    "tensorflow.python.training.basic_session_run_hooks:CheckpointSaverHook()._timer",
    "tensorflow.python.training.basic_session_run_hooks:GlobalStepWaiterHook()._wait_until_step",
    "tensorflow.python.training.basic_session_run_hooks:ProfilerHook()._output_file",
    "tensorflow.python.training.basic_session_run_hooks:ProfilerHook()._show_dataflow",
    "tensorflow.python.training.basic_session_run_hooks:ProfilerHook()._show_memory",
    "tensorflow.python.training.basic_session_run_hooks:ProfilerHook()._timer",
)

# TensorFlow's stock hooks whose own methods need a TF1 session; made this
# package's hook of the same name, with the same arguments (`stock_arguments`).
REMADE = (
    "StopAtStepHook",
    "StepCounterHook",
    "SummarySaverHook",
    "CheckpointSaverHook",
    "GlobalStepWaiterHook",
    "ProfilerHook",
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


def _timer_steps_and_secs(hook: Any) -> tuple[Any, Any]:
    timer = hook._timer
    return timer._every_steps, timer._every_secs


def stock_arguments(hook: Any) -> tuple[str, dict[str, Any]] | None:
    """The class name and constructor arguments of one of TensorFlow's stock hooks.

    Checked on TensorFlow 2.21: the constructors of the `REMADE` classes
    keep their arguments in the attributes read here (a directory joined
    with a file name, a `SecondOrStepTimer` of the steps and seconds).
    None for any other object, a subclass included: its own methods may
    rely on TensorFlow's.
    """
    from tensorflow.python.training import basic_session_run_hooks as tf_hooks

    name = type(hook).__name__
    if name not in REMADE or type(hook) is not getattr(tf_hooks, name):
        return None
    if name == "StopAtStepHook":
        return name, {"num_steps": hook._num_steps, "last_step": hook._last_step}
    if name == "GlobalStepWaiterHook":
        return name, {"wait_until_step": hook._wait_until_step}
    steps, secs = _timer_steps_and_secs(hook)
    if name == "StepCounterHook":
        return name, {
            "every_n_steps": steps,
            "every_n_secs": secs,
            "output_dir": hook._output_dir,
            "summary_writer": hook._summary_writer,
        }
    if name == "SummarySaverHook":
        return name, {
            "save_steps": steps,
            "save_secs": secs,
            "output_dir": hook._output_dir,
            "summary_writer": hook._summary_writer,
            "scaffold": hook._scaffold,
            "summary_op": hook._summary_op,
        }
    if name == "CheckpointSaverHook":
        return name, {
            "checkpoint_dir": hook._checkpoint_dir,
            "save_secs": secs,
            "save_steps": steps,
            "saver": hook._saver,
            "checkpoint_basename": os.path.basename(hook._save_path),
            "scaffold": hook._scaffold,
            "listeners": list(hook._listeners),
            "save_graph_def": hook._save_graph_def,
        }
    return name, {
        "save_steps": steps,
        "save_secs": secs,
        "output_dir": os.path.dirname(hook._output_file),
        "show_dataflow": hook._show_dataflow,
        "show_memory": hook._show_memory,
    }
