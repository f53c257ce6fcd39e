"""`add_metrics`: an Estimator like another, with more evaluation metrics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import keras

from keras_estimator._src.base.fn_args import call_with_accepted, fn_args
from keras_estimator._src.base.mode_keys import ModeKeys
from keras_estimator._src.estimator.estimator import Estimator, EstimatorInternals

_METRIC_FN_ARGS = ("features", "labels", "predictions", "config")


def add_metrics(estimator: Estimator, metric_fn: Callable[..., Any]) -> Estimator:
    """Returns an Estimator evaluating `metric_fn`'s metrics besides its own.

    The new Estimator shares `estimator`'s model_dir, config, params and
    warm-start settings; its model_fn is `estimator`'s, with the metrics of
    `metric_fn` added to `eval_metric_ops` in EVAL mode (a metric of the same
    name replaces the model_fn's).

    Args:
        estimator: the Estimator to extend.
        metric_fn: takes any of `features`, `labels`, `predictions` (the
            model_fn's predictions) and `config`, by name, and returns a dict
            of metrics: `(value_op, update_op)` pairs or Keras metric objects.

    Returns:
        A new `Estimator`.

    Raises:
        TypeError: `estimator` is not an Estimator, or `metric_fn` is not
            callable.
        ValueError: `metric_fn` takes an argument it cannot be given.

    Example:
        >>> def my_auc(labels, predictions):  # doctest: +SKIP
        ...     auc = tf.keras.metrics.AUC()
        ...     auc.update_state(labels, predictions["logistic"])
        ...     return {"auc": auc}
        >>> estimator = add_metrics(estimator, my_auc)  # doctest: +SKIP
    """
    if not isinstance(estimator, Estimator):
        raise TypeError(
            f"add_metrics needs an Estimator as `estimator`, got "
            f"{type(estimator).__name__} ({estimator!r})."
        )
    if not callable(metric_fn):
        raise TypeError(
            f"metric_fn must be callable, got {metric_fn!r}: pass a function "
            "returning a dict of metrics."
        )
    accepted = fn_args(metric_fn)
    unexpected = [name for name in accepted if name not in _METRIC_FN_ARGS]
    if unexpected:
        raise ValueError(
            f"metric_fn ({getattr(metric_fn, '__name__', metric_fn)!r}) takes "
            f"{unexpected}, which add_metrics cannot give it. It may take only "
            f"{list(_METRIC_FN_ARGS)}, by those names."
        )
    base_model_fn = estimator.model_fn

    def model_fn(features: Any, labels: Any, mode: str, config: Any) -> Any:
        spec = base_model_fn(features, labels, mode, config)
        if mode != ModeKeys.EVAL:
            return spec
        candidates = {
            "features": features,
            "labels": labels,
            "predictions": spec.predictions,
            "config": config,
        }
        added = call_with_accepted(metric_fn, candidates)
        if not isinstance(added, dict):
            raise TypeError(
                f"metric_fn must return a dict of metrics, got "
                f"{type(added).__name__} ({added!r})."
            )
        metrics = dict(spec.eval_metric_ops or {})
        for key in added:
            # A Keras metric replaced under its key (a head's 'auc') is no
            # longer returned, so the model_fn does not mark it: its
            # variables are evaluation state all the same, in no checkpoint,
            # as in 2.15, where Keras metrics' variables were in none.
            replaced = getattr(metrics.get(key), "metric", metrics.get(key))
            if isinstance(replaced, keras.metrics.Metric):
                EstimatorInternals(extended[0]).keep_out_of_checkpoints(replaced.variables)
        metrics.update(added)
        return spec._replace(eval_metric_ops=metrics)

    extended = [
        Estimator(
            model_fn,
            model_dir=estimator.model_dir,
            config=estimator.config,
            # The same settings object (tf.estimator passed its private one too).
            warm_start_from=EstimatorInternals(estimator).warm_start_settings,
        )
    ]
    return extended[0]
