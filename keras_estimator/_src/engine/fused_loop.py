"""The fused loop: up to N steps of a model in one compiled call.

`fused_steps(one_step, logs_spec)` is the loop every training and evaluation
call runs, on one machine (`ModelFnModel`'s train and test functions) and on
each worker of a parameter-server cluster (`ps_training`): a `tf.while_loop`
over an iterator whose step count is a tensor, so a new count never
retraces.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

LOSS_KEY = "loss"
GLOBAL_STEP_KEY = "global_step"
NAN_STEP_KEY = "_nan_loss_step"


def fused_steps(
    one_step: Callable[[Any], dict[str, tf.Tensor]],
    logs_spec: Callable[[], dict[str, tf.TensorSpec]],
) -> Any:
    """A tf.function running up to `num_steps` steps from an iterator.

    It stops early when the iterator is exhausted and returns how many steps
    ran with the last step's outputs. The next element is only fetched when
    another step will run, so no batch is lost between calls.

    Training logs also carry `NAN_STEP_KEY`: the global step of the first step
    of the run whose loss was NaN, or -1. A flag kept in the loop costs next to
    nothing, and a NaN at any step is reported, not only at the run's last.
    """

    def run(iterator: Any, num_steps: tf.Tensor) -> Any:
        initial_logs = tf.nest.map_structure(
            lambda s: tf.zeros(s.shape, s.dtype), logs_spec()
        )
        watch_nan = LOSS_KEY in initial_logs and GLOBAL_STEP_KEY in initial_logs

        def keep_going(count: tf.Tensor, logs: Any, element: Any, nan_step: Any) -> tf.Tensor:
            return tf.logical_and(count < num_steps, element.has_value())

        def step(count: tf.Tensor, logs: Any, element: Any, nan_step: Any) -> Any:
            logs = one_step(element.get_value())
            if watch_nan:
                nan_step = first_nan_step(nan_step, logs)
            element = tf.cond(
                count + 1 < num_steps,
                iterator.get_next_as_optional,
                lambda: element,
            )
            return count + 1, logs, element, nan_step

        count, logs, _, nan_step = tf.while_loop(
            keep_going,
            step,
            (
                tf.constant(0),
                initial_logs,
                iterator.get_next_as_optional(),
                tf.constant(-1, tf.int64),
            ),
        )
        if watch_nan:
            logs = dict(logs, **{NAN_STEP_KEY: nan_step})
        return count, logs

    return tf.function(run, reduce_retracing=True, autograph=False)


def first_nan_step(nan_step: tf.Tensor, logs: dict[str, tf.Tensor]) -> tf.Tensor:
    """`nan_step`, or this step's global step if its loss is the run's first NaN."""
    first = tf.logical_and(nan_step < 0, tf.math.is_nan(logs[LOSS_KEY]))
    return tf.where(first, tf.cast(logs[GLOBAL_STEP_KEY], tf.int64), nan_step)
