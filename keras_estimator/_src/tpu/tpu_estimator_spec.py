"""`TPUEstimatorSpec`: what a TPUEstimator model_fn returns, and its EstimatorSpec.

A TPU model_fn gives metrics as `eval_metrics=(metric_fn, tensors)` and
summaries as `host_call=(fn, tensors)`, because on a TPU those ran on the
host after the tensors left the device; the scaffold comes from
`scaffold_fn()`. `as_estimator_spec` turns one into the `EstimatorSpec` the
loop runs, as 2.15 did off the TPU: `metric_fn(*tensors)` (or
`**tensors` for a dict) gives `eval_metric_ops`, and the ops `fn` returns run
after every training step, fetched by a hook.
"""

from __future__ import annotations

import collections
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.session_run_hook import SessionRunArgs, SessionRunHook


class TPUEstimatorSpec(
    collections.namedtuple(
        "TPUEstimatorSpec",
        [
            "mode",
            "predictions",
            "loss",
            "train_op",
            "eval_metrics",
            "export_outputs",
            "scaffold_fn",
            "host_call",
            "training_hooks",
            "evaluation_hooks",
            "prediction_hooks",
        ],
    )
):
    """A model_fn's result for TPUEstimator; see the module.

    Args:
        mode, predictions, loss, train_op, export_outputs, training_hooks,
        evaluation_hooks, prediction_hooks: as for `EstimatorSpec`.
        eval_metrics: `(metric_fn, tensors)`: `tensors` a list (passed
            positionally) or a dict (passed by name) of tensors; `metric_fn`
            returns a dict of `(value, update_op)` metrics.
        scaffold_fn: A function of no arguments returning a
            `tf.compat.v1.train.Scaffold`.
        host_call: `(fn, tensors)` as `eval_metrics`; the ops `fn` returns
            (summaries, typically) run with every training step.

    Raises:
        TypeError: a hook is not a SessionRunHook, `eval_metrics` or
            `host_call` is not a `(function, tensors)` pair, or
            `scaffold_fn` is not callable.
        ValueError: `tensors` is a dict whose keys do not match `fn`'s
            parameters.
    """

    def __new__(
        cls,
        mode: str,
        predictions: Any = None,
        loss: Any = None,
        train_op: Any = None,
        eval_metrics: tuple[Callable[..., Any], Any] | None = None,
        export_outputs: Any = None,
        scaffold_fn: Callable[[], Any] | None = None,
        host_call: tuple[Callable[..., Any], Any] | None = None,
        training_hooks: Sequence[Any] | None = None,
        evaluation_hooks: Sequence[Any] | None = None,
        prediction_hooks: Sequence[Any] | None = None,
    ) -> TPUEstimatorSpec:
        for name, call in (("eval_metrics", eval_metrics), ("host_call", host_call)):
            if call is not None:
                _check_host_call(name, call)
        if scaffold_fn is not None and not callable(scaffold_fn):
            raise TypeError(
                f"scaffold_fn must be a function returning a Scaffold, got "
                f"{scaffold_fn!r}."
            )
        hooks = {
            "training_hooks": tuple(training_hooks or ()),
            "evaluation_hooks": tuple(evaluation_hooks or ()),
            "prediction_hooks": tuple(prediction_hooks or ()),
        }
        for field, values in hooks.items():
            for hook in values:
                if not _is_hook(hook):
                    raise TypeError(
                        f"All hooks must be SessionRunHook instances; {field} holds "
                        f"{hook!r}."
                    )
        return super().__new__(
            cls,
            mode,
            predictions,
            loss,
            train_op,
            eval_metrics,
            export_outputs,
            scaffold_fn,
            host_call,
            **hooks,
        )

    def as_estimator_spec(self) -> EstimatorSpec:
        """The EstimatorSpec that runs this spec off the TPU; see the module."""
        eval_metric_ops = None
        if self.eval_metrics is not None:
            eval_metric_ops = call_host_fn(*self.eval_metrics)
        training_hooks = self.training_hooks
        if self.host_call is not None:
            training_hooks += (HostCallHook(call_host_fn(*self.host_call)),)
        return EstimatorSpec(
            mode=self.mode,
            predictions=self.predictions,
            loss=self.loss,
            train_op=self.train_op,
            eval_metric_ops=eval_metric_ops,
            export_outputs=self.export_outputs,
            scaffold=self.scaffold_fn() if self.scaffold_fn is not None else None,
            training_hooks=training_hooks,
            evaluation_hooks=self.evaluation_hooks,
            prediction_hooks=self.prediction_hooks,
        )


def _check_host_call(name: str, call: Any) -> None:
    if not isinstance(call, (tuple, list)) or len(call) != 2 or not callable(call[0]):
        raise TypeError(
            f"{name} must be a (function, tensors) pair, got {call!r}. For example "
            f"{name}=(metric_fn, [labels, logits])."
        )
    fn, tensors = call
    if isinstance(tensors, Mapping):
        names = _parameter_names(fn)
        if names is not None and set(tensors) - names:
            raise ValueError(
                f"{name}'s tensors are a dict with keys {sorted(tensors)}, but its "
                f"function takes {sorted(names)}: the keys must be its parameter "
                "names."
            )
    elif not isinstance(tensors, (tuple, list)):
        raise TypeError(
            f"{name}'s tensors must be a list or a dict of tensors, got "
            f"{type(tensors).__name__}."
        )


def _parameter_names(fn: Callable[..., Any]) -> set[str] | None:
    """fn's named parameters, or None when it takes **kwargs."""
    parameters = inspect.signature(fn).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return {p.name for p in parameters}


def call_host_fn(fn: Callable[..., Any], tensors: Any) -> Any:
    """`fn(**tensors)` for a dict, else `fn(*tensors)`."""
    if isinstance(tensors, Mapping):
        return fn(**tensors)
    return fn(*tensors)


def _is_hook(value: Any) -> bool:
    """A SessionRunHook: ours, TensorFlow's, or any object with its run methods."""
    return isinstance(value, SessionRunHook) or (
        callable(getattr(value, "before_run", None))
        and callable(getattr(value, "after_run", None))
    )


class HostCallHook(SessionRunHook):
    """Runs a host_call's ops with every training step."""

    def __init__(self, ops: Any) -> None:
        self._ops = ops

    def before_run(self, run_context: Any) -> SessionRunArgs:
        return SessionRunArgs(self._ops)
