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

    Training logs also carry `NAN_STEP_KEY`: the global step of the step
    whose loss was NaN, or -1. The run ends after that step, as tf.estimator's
    training ended at it: no later step changes the variables, and the logs
    returned are that step's.
    """

    def run(iterator: Any, num_steps: tf.Tensor) -> Any:
        first = iterator.get_next_as_optional()
        count, logs, nan_step, watch_nan = _loop(one_step, logs_spec(), iterator, num_steps, first)
        if watch_nan:
            logs = dict(logs, **{NAN_STEP_KEY: nan_step})
        return count, logs

    return tf.function(run, reduce_retracing=True, autograph=False)


def fused_then_fetching(
    one_step: Callable[[Any], dict[str, tf.Tensor]],
    fetching_step: Any,
    logs_spec: Callable[[], dict[str, tf.TensorSpec]],
) -> Any:
    """A tf.function running `num_steps - 1` fused steps, then one fetching step.

    One compiled call does what a fused call and a call of the fetching step
    did one after the other: `one_step` up to `num_steps - 1` times (as
    `fused_steps`), then, unless the input ended or a loss was NaN before,
    `fetching_step` (a traced function of one element, returning the step's
    logs with what hooks fetch) on the next element. The last step is the
    same step the fetching call ran, so the weights, the fetched values and
    the summaries are the same.

    The function of `(iterator, num_steps)` returns `(fused steps run,
    their last logs with NAN_STEP_KEY, whether the fetching step ran, its
    outputs)`; the outputs are zeros when it did not run.
    """
    outputs_spec = tf.nest.map_structure(
        lambda t: tf.TensorSpec(t.shape, t.dtype), fetching_step.structured_outputs
    )

    def run(iterator: Any, num_steps: tf.Tensor) -> Any:
        ahead = num_steps - 1
        # No element is read for the fused steps when there are none.
        first = tf.cond(ahead > 0, iterator.get_next_as_optional, lambda: _no_element(iterator))
        count, logs, nan_step, watch_nan = _loop(one_step, logs_spec(), iterator, ahead, first)
        logs = dict(logs, **{NAN_STEP_KEY: nan_step}) if watch_nan else dict(logs)
        # A NaN loss before the last step ends the run at its step: the
        # fetching step does not run (nor does a separate fetching call).
        due = tf.logical_and(count >= ahead, nan_step < 0)
        element = tf.cond(
            due, iterator.get_next_as_optional, lambda: _no_element(iterator)
        )
        fetched = element.has_value()
        outputs = tf.cond(
            fetched,
            lambda: fetching_step(element.get_value()),
            lambda: tf.nest.map_structure(_zeros, outputs_spec),
        )
        return count, logs, fetched, outputs

    return tf.function(run, reduce_retracing=True, autograph=False)


def _no_element(iterator: Any) -> Any:
    return tf.experimental.Optional.empty(iterator.element_spec)


def _zeros(spec: tf.TensorSpec) -> tf.Tensor:
    """A value of `spec`'s type for a step that did not run (unknown sizes: 0)."""
    dims = spec.shape.as_list() if spec.shape.rank is not None else []
    return tf.zeros([0 if dim is None else dim for dim in dims], spec.dtype)


def _loop(
    one_step: Callable[[Any], dict[str, tf.Tensor]],
    spec: dict[str, tf.TensorSpec],
    iterator: Any,
    num_steps: tf.Tensor,
    first: Any,
) -> tuple[tf.Tensor, Any, tf.Tensor, bool]:
    """Up to `num_steps` steps of `one_step` from `first` (an optional element)
    on: (steps run, last logs, NaN loss's step or -1, whether watched).

    Training steps (logs with the loss and the global step) are watched for
    a NaN loss: the loop ends after the first such step, reading no further
    element.
    """
    initial_logs = tf.nest.map_structure(lambda s: tf.zeros(s.shape, s.dtype), spec)
    watch_nan = LOSS_KEY in initial_logs and GLOBAL_STEP_KEY in initial_logs

    def keep_going(count: tf.Tensor, logs: Any, element: Any, nan_step: Any) -> tf.Tensor:
        going = tf.logical_and(count < num_steps, element.has_value())
        return tf.logical_and(going, nan_step < 0) if watch_nan else going

    def step(count: tf.Tensor, logs: Any, element: Any, nan_step: Any) -> Any:
        logs = one_step(element.get_value())
        more = count + 1 < num_steps
        if watch_nan:
            nan_step = first_nan_step(nan_step, logs)
            more = tf.logical_and(more, nan_step < 0)
        element = tf.cond(more, iterator.get_next_as_optional, lambda: element)
        return count + 1, logs, element, nan_step

    count, logs, _, nan_step = tf.while_loop(
        keep_going,
        step,
        (tf.constant(0), initial_logs, first, tf.constant(-1, tf.int64)),
    )
    return count, logs, nan_step, watch_nan


def first_nan_step(nan_step: tf.Tensor, logs: dict[str, tf.Tensor]) -> tf.Tensor:
    """`nan_step`, or this step's global step if its loss is the run's first NaN."""
    first = tf.logical_and(nan_step < 0, tf.math.is_nan(logs[LOSS_KEY]))
    return tf.where(first, tf.cast(logs[GLOBAL_STEP_KEY], tf.int64), nan_step)
