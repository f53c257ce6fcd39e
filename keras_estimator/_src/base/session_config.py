"""`RunConfig(session_config=...)` carried over to TensorFlow 2's runtime settings.

A TF1 `ConfigProto` configured the session an Estimator ran in. TF2 has no
sessions; the settings that have a process-wide TF2 equivalent are applied
through `tf.config` when an Estimator is made:

| ConfigProto field | TF2 setting |
|---|---|
| `intra_op_parallelism_threads`, `inter_op_parallelism_threads` | `tf.config.threading` |
| `allow_soft_placement` | `tf.config.set_soft_device_placement` |
| `log_device_placement` | `tf.debugging.set_log_device_placement` |
| `device_count["GPU"]` | `tf.config.set_visible_devices` (the first N GPUs) |
| `gpu_options.allow_growth` | `tf.config.experimental.set_memory_growth` |

Thread counts, visible devices and memory growth can only change before
TensorFlow's runtime starts (its first operation): later, a setting that
differs is reported in a warning that says how to apply it. Other fields have
no TF2 equivalent and are reported once. `ConfigProto` is a proto3 message, so
a field holding its default (0, False) reads as unset and changes nothing.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

import tensorflow as tf

logger = logging.getLogger("keras_estimator")

# Set by RunConfig itself in a cluster, and meaningless without sessions.
_IGNORED_QUIETLY = frozenset({"device_filters"})
_reported: set[str] = set()


def default_session_config() -> Any:
    """The `ConfigProto` 2.15's Estimator took when given none (shown, not applied)."""
    config = tf.compat.v1.ConfigProto(allow_soft_placement=True)
    rewrite_options = config.graph_options.rewrite_options
    rewrite_options.meta_optimizer_iterations = type(rewrite_options).ONE
    return config


def apply_session_config(config: Any) -> None:
    """Applies what TF2 can of a `tf.compat.v1.ConfigProto` (None: nothing).

    2.15's default (an Estimator's `config.session_config` when given none,
    passed on to another Estimator) is TF2's behaviour already.
    """
    if config is None or config == default_session_config():
        return
    fields = {field.name for field, _ in config.ListFields()}
    threading = tf.config.threading
    settings: dict[str, tuple[Callable[[], Any], Callable[[Any], None], Any]] = {
        "intra_op_parallelism_threads": (
            threading.get_intra_op_parallelism_threads,
            threading.set_intra_op_parallelism_threads,
            config.intra_op_parallelism_threads,
        ),
        "inter_op_parallelism_threads": (
            threading.get_inter_op_parallelism_threads,
            threading.set_inter_op_parallelism_threads,
            config.inter_op_parallelism_threads,
        ),
        "allow_soft_placement": (
            tf.config.get_soft_device_placement,
            tf.config.set_soft_device_placement,
            config.allow_soft_placement,
        ),
        "log_device_placement": (
            tf.debugging.get_log_device_placement,
            tf.debugging.set_log_device_placement,
            config.log_device_placement,
        ),
    }
    for name, (get, set_, wanted) in settings.items():
        if name in fields and get() != wanted:
            _set(f"session_config.{name}={wanted!r}", functools.partial(set_, wanted))
    gpus = tf.config.list_physical_devices("GPU")
    if "device_count" in fields and "GPU" in config.device_count:
        visible = gpus[: config.device_count["GPU"]]
        if tf.config.get_visible_devices("GPU") != visible:
            _set(
                f"session_config.device_count['GPU']={config.device_count['GPU']}",
                lambda: tf.config.set_visible_devices(visible, "GPU"),
            )
    handled = set(settings) | {"device_count"} | _IGNORED_QUIETLY
    if "gpu_options" in fields:
        handled.add("gpu_options")
        options = {field.name for field, _ in config.gpu_options.ListFields()}
        if config.gpu_options.allow_growth:
            for gpu in gpus:
                if not tf.config.experimental.get_memory_growth(gpu):
                    _set(
                        "session_config.gpu_options.allow_growth=True",
                        functools.partial(
                            tf.config.experimental.set_memory_growth, gpu, True
                        ),
                    )
        _report_ignored({f"gpu_options.{name}" for name in options - {"allow_growth"}})
    _report_ignored(fields - handled)


def _set(description: str, apply: Callable[[], None]) -> None:
    try:
        apply()
    except RuntimeError:
        # TensorFlow's runtime has started: these settings are fixed now.
        logger.warning(
            "RunConfig %s cannot take effect: TensorFlow has already run "
            "operations in this process. Make the Estimator before anything "
            "else runs, or set it through tf.config at the start of the program.",
            description,
        )


def _report_ignored(names: set[str]) -> None:
    new = sorted(names - _reported)
    if new:
        _reported.update(new)
        logger.warning(
            "RunConfig session_config fields %s have no TensorFlow 2 equivalent "
            "and are ignored.",
            ", ".join(new),
        )
