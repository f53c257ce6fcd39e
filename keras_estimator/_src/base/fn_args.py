"""Calling user functions (model_fn, input_fn) with the arguments they accept."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

MODEL_FN_ARGS = ("features", "labels", "mode", "params", "config")


def fn_args(fn: Callable[..., Any]) -> tuple[str, ...]:
    """Names of the parameters `fn` takes, seeing through `functools.partial`.

    Arguments already bound by a partial are left out; `self` of a bound
    method is not listed.
    """
    if isinstance(fn, functools.partial):
        inner = fn_args(fn.func)
        bound = set(fn.keywords or {})
        return tuple(a for a in inner[len(fn.args) :] if a not in bound)
    signature = inspect.signature(fn)
    return tuple(
        name
        for name, p in signature.parameters.items()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    )


def accepts_kwargs(fn: Callable[..., Any]) -> bool:
    target = fn.func if isinstance(fn, functools.partial) else fn
    return any(
        p.kind is p.VAR_KEYWORD for p in inspect.signature(target).parameters.values()
    )


def required_parameters_outside(
    fn: Callable[..., Any], available: dict[str, Any]
) -> list[str]:
    """Parameters of `fn` without a default that `available` cannot fill.

    Arguments are passed by keyword, so a positional-only parameter without a
    default can never be filled. A callable whose signature cannot be read
    (some builtins) is given the benefit of the doubt: an empty list.
    """
    target = fn.func if isinstance(fn, functools.partial) else fn
    try:
        parameters = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return []
    if isinstance(fn, functools.partial):
        bound = set(fn.keywords or {})
        positional = list(parameters)[: len(fn.args)]
        bound.update(positional)
    else:
        bound = set()
    return [
        name
        for name, p in parameters.items()
        if p.default is p.empty
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        and name not in bound
        and (p.kind is p.POSITIONAL_ONLY or name not in available)
    ]


def validate_model_fn(model_fn: Any) -> tuple[str, ...]:
    """Checks a model_fn's signature; returns its parameter names.

    Raises:
        ValueError: `model_fn` is None (tf.estimator 2.15's type for it).
        TypeError: `model_fn` is not callable.
        ValueError: it takes parameters other than features, labels, mode,
            params and config, or does not take `features`.
    """
    if model_fn is None:
        # tf.estimator 2.15 raised ValueError for a missing model_fn.
        raise ValueError(
            "model_fn must be provided to Estimator, got None. Pass a function "
            "`model_fn(features, labels, mode, params, config)`."
        )
    if not callable(model_fn):
        raise TypeError(
            f"model_fn must be callable, got {model_fn!r} of type "
            f"{type(model_fn).__name__}. Pass a function "
            "`model_fn(features, labels, mode, params, config)`."
        )
    names = fn_args(model_fn)
    unknown = [n for n in names if n not in MODEL_FN_ARGS]
    if unknown:
        raise ValueError(
            f"model_fn has unknown parameters {unknown}; it may only take "
            f"{list(MODEL_FN_ARGS)}. Rename them, or bind extra arguments with "
            "functools.partial or `params`."
        )
    if "features" not in names:
        raise ValueError(
            f"model_fn must take a `features` parameter; it takes {list(names)}."
        )
    return names


def call_with_accepted(fn: Callable[..., Any], candidates: dict[str, Any]) -> Any:
    """Calls `fn` with the keyword arguments among `candidates` it accepts."""
    names = fn_args(fn)
    if accepts_kwargs(fn):
        return fn(**candidates)
    return fn(**{k: v for k, v in candidates.items() if k in names})
