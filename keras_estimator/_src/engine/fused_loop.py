"""The fused loop: up to N steps of a model in one compiled call.

`steps_loop` is the one loop of several steps in a call: a `tf.while_loop`
over an iterator whose step count is a tensor, so a new count never
retraces; it reads an element only for a step that will run and ends after
a step whose loss is NaN (an input that never ends is read with no such
bookkeeping). Everything that runs steps in a loop builds on it:
`fused_steps(one_step, logs_spec)`, the loop every training and evaluation
call runs, on one machine (`ModelFnModel`'s train and test functions) and on
each worker of a parameter-server cluster (`ps_training`);
`fused_then_fetching`, fused steps and then one fetching step; and
`fetching_loop.fetching_steps`, fetching steps that keep every step's values.
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
    endless: bool = False,
) -> Any:
    """A tf.function running up to `num_steps` steps from an iterator
    (`endless`: one that never ends, read as `steps_loop` says).

    It stops early when the iterator is exhausted and returns how many steps
    ran with the last step's outputs. The next element is only fetched when
    another step will run, so no batch is lost between calls.

    Training logs also carry `NAN_STEP_KEY`: the global step of the step
    whose loss was NaN, or -1. The run ends after that step, as tf.estimator's
    training ended at it: no later step changes the variables, and the logs
    returned are that step's.
    """

    def run(iterator: Any, num_steps: tf.Tensor) -> Any:
        first = None if endless else iterator.get_next_as_optional()
        count, logs, nan, _ = steps_loop(one_step, logs_spec(), iterator, num_steps, first)
        if nan is not None:
            logs = dict(logs, **{NAN_STEP_KEY: nan_loss_step(nan, logs)})
        return count, logs

    return tf.function(run, reduce_retracing=True, autograph=False)


def fused_then_fetching(
    one_step: Callable[[Any], dict[str, tf.Tensor]],
    fetching_step: Any,
    logs_spec: Callable[[], dict[str, tf.TensorSpec]],
    endless: bool = False,
) -> Any:
    """A tf.function running `num_steps - 1` fused steps, then one fetching step.

    One compiled call does what a fused call and a call of the fetching step
    did one after the other: `one_step` up to `num_steps - 1` times (as
    `fused_steps`), then, unless the input ended or a loss was NaN before,
    `fetching_step` (a traced function of one element, returning the step's
    logs with what hooks fetch) on the next element. The last step is the
    same step the fetching call ran, so the weights, the fetched values and
    the summaries are the same.

    With `endless`, the fused steps read an iterator that never ends as
    `steps_loop` says. The function of `(iterator, num_steps, fetch)` returns
    `(fused steps run,
    their last logs with NAN_STEP_KEY, whether the fetching step ran, its
    outputs)`; the outputs are zeros when it did not run. With `fetch`
    False it runs the `num_steps - 1` fused steps only, as `fused_steps`
    would: one compiled function then serves a run ending with a fetch, a
    run ending with none and a lone fetching step (`num_steps` 1), so a
    training compiles one loop rather than three.
    """
    outputs_spec = tf.nest.map_structure(
        lambda t: tf.TensorSpec(t.shape, t.dtype), fetching_step.structured_outputs
    )

    def run(iterator: Any, num_steps: tf.Tensor, fetch: tf.Tensor) -> Any:
        ahead = num_steps - 1
        # No element is read for the fused steps when there are none.
        first = (
            None
            if endless
            else tf.cond(ahead > 0, iterator.get_next_as_optional, lambda: _no_element(iterator))
        )
        count, logs, nan, _ = steps_loop(one_step, logs_spec(), iterator, ahead, first)
        logs = dict(logs)
        due = tf.logical_and(count >= ahead, fetch)
        if nan is not None:
            logs[NAN_STEP_KEY] = nan_loss_step(nan, logs)
            # A NaN loss before the last step ends the run at its step: the
            # fetching step does not run (nor does a separate fetching call).
            due = tf.logical_and(due, tf.logical_not(nan))
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


def steps_loop(
    one_step: Callable[[Any], dict[str, Any]],
    spec: dict[str, tf.TensorSpec],
    iterator: Any,
    num_steps: tf.Tensor,
    first: Any,
    record: Callable[[tf.Tensor, dict[str, Any], Any], tuple[dict[str, Any], Any]] | None = None,
    records: Any = (),
) -> tuple[tf.Tensor, Any, tf.Tensor | None, Any]:
    """The loop of steps, in a trace: up to `num_steps` steps of `one_step`.

    Args:
        one_step: a step of one element, returning its outputs.
        spec: the structure of the logs the loop returns.
        iterator: where the elements come from.
        num_steps: the most steps to run (a scalar int32 tensor).
        first: the first element, an optional (empty: no step runs). The
            next element is only read when another step will run, so no
            batch is lost between calls. None for an iterator that never
            ends (`dataset_sources.never_ends`): each step reads its element
            itself, with none of the optional's bookkeeping.
        record: for a loop that keeps something of every step:
            `record(index, outputs, records)` returns the step's logs (of
            `spec`'s structure) and `records` with this step's part added.
            Without it the step's outputs are its logs.
        records: what `record` starts from (TensorArrays, say).

    Returns:
        `(steps run, the last step's logs, whether that step's loss was
        NaN, records)`. Training logs (with the loss and the global step)
        are watched for a NaN loss: the loop ends after the first such step,
        reading no further element. For other logs the NaN flag is None.
    """
    initial_logs = tf.nest.map_structure(lambda s: tf.zeros(s.shape, s.dtype), spec)
    watch_nan = LOSS_KEY in spec and GLOBAL_STEP_KEY in spec

    def run_step(count: tf.Tensor, element: Any, records: Any) -> tuple[Any, Any, Any]:
        logs = one_step(element)
        if record is not None:
            logs, records = record(count, logs, records)
        nan = tf.math.is_nan(logs[LOSS_KEY]) if watch_nan else tf.constant(False)
        return logs, nan, records

    if first is None:

        def keep_reading(count: tf.Tensor, logs: Any, nan: Any, records: Any) -> tf.Tensor:
            going = count < num_steps
            return tf.logical_and(going, tf.logical_not(nan)) if watch_nan else going

        def read_step(count: tf.Tensor, logs: Any, nan: Any, records: Any) -> Any:
            logs, nan, records = run_step(count, iterator.get_next(), records)
            return count + 1, logs, nan, records

        count, logs, nan, records = tf.while_loop(
            keep_reading, read_step, (tf.constant(0), initial_logs, tf.constant(False), records)
        )
        return count, logs, nan if watch_nan else None, records

    def keep_going(count: tf.Tensor, logs: Any, element: Any, nan: Any, records: Any) -> tf.Tensor:
        going = tf.logical_and(count < num_steps, element.has_value())
        return tf.logical_and(going, tf.logical_not(nan)) if watch_nan else going

    def step(count: tf.Tensor, logs: Any, element: Any, nan: Any, records: Any) -> Any:
        logs, nan, records = run_step(count, element.get_value(), records)
        more = count + 1 < num_steps
        if watch_nan:
            more = tf.logical_and(more, tf.logical_not(nan))
        element = tf.cond(more, iterator.get_next_as_optional, lambda: element)
        return count + 1, logs, element, nan, records

    count, logs, _, nan, records = tf.while_loop(
        keep_going,
        step,
        (tf.constant(0), initial_logs, first, tf.constant(False), records),
    )
    return count, logs, nan if watch_nan else None, records


def nan_loss_step(nan: tf.Tensor, logs: dict[str, tf.Tensor]) -> tf.Tensor:
    """The global step of `logs`' step if `nan` (its loss was NaN), else -1.

    `steps_loop` ends at a NaN loss, so its last logs are the NaN step's.
    """
    return tf.where(nan, tf.cast(logs[GLOBAL_STEP_KEY], tf.int64), tf.constant(-1, tf.int64))
