"""Several fetching steps in one compiled call, every step's fetches kept.

When every hook that fetches only observes (`HookCallback`), a run may cover
several steps that each fetch the same values. `fetching_steps` runs them in
one call of the fused loop's `steps_loop`, the loop that runs steps that
fetch nothing, keeping each step's fetched values and global step; the hook
dispatcher then hands each step's values to the hooks in step order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tensorflow as tf

from keras_estimator._src.engine.fused_loop import GLOBAL_STEP_KEY, steps_loop


def fetched_spec(one_step: Callable[[Any], dict[str, Any]], element_spec: Any, fetches_key: str) -> Any:
    """key -> the `tf.TensorSpec` of what `one_step` fetches, from a trace not run.

    None when a fetched value's shape is not fully known: values of
    different shapes (a last, smaller batch) cannot be stacked.
    """
    probe = tf.function(one_step, autograph=False).get_concrete_function(element_spec)
    fetched = probe.structured_outputs[fetches_key]
    if not all(value.shape.is_fully_defined() for value in fetched.values()):
        return None
    return {key: tf.TensorSpec(value.shape, value.dtype) for key, value in fetched.items()}


# What the stacked values of one run may hold at most: a hook fetching a large
# variable on every step gets shorter runs.
_MAX_STACKED_BYTES = 64 * 2**20


def steps_within_memory(fetched: dict[str, tf.TensorSpec]) -> int:
    """The most steps whose stacked values `fetched` stay within the bound (at least 1)."""
    per_step = sum(
        spec.shape.num_elements() * (spec.dtype.size if spec.dtype != tf.string else 64)
        for spec in fetched.values()
    )
    return max(_MAX_STACKED_BYTES // max(per_step, 1), 1)


def fetching_steps(
    one_step: Callable[[Any], dict[str, Any]],
    logs_spec: Callable[[], dict[str, tf.TensorSpec]],
    fetched: dict[str, tf.TensorSpec],
    fetches_key: str,
    endless: bool = False,
) -> Any:
    """A tf.function running up to `num_steps` fetching steps from an iterator.

    Args:
        one_step: a training step of one element, returning its logs with
            the fetched values (a dict key -> tensor) under `fetches_key`.
        logs_spec: the logs' structure without the fetches.
        fetched: key -> the spec of each fetched value (`fetched_spec`).
        fetches_key: where `one_step`'s logs hold the fetched values.
        endless: the iterator never ends (read as `steps_loop` says).

    The function of `(iterator, num_steps)` returns `(steps run, last
    step's logs, whether a NaN loss ended the run, each step's global step,
    key -> each step's value stacked)`. It stops after `num_steps` steps,
    when the input ends, or after a step whose loss is NaN; the next element
    is only read when another step will run, so no batch is lost.
    """

    def run(iterator: Any, num_steps: tf.Tensor) -> Any:
        spec = logs_spec()

        def record(index: tf.Tensor, outputs: dict[str, Any], records: Any) -> Any:
            logs = dict(outputs)
            values = logs.pop(fetches_key)
            steps, arrays = records
            steps = steps.write(index, tf.cast(logs[GLOBAL_STEP_KEY], tf.int64))
            arrays = {key: arrays[key].write(index, values[key]) for key in arrays}
            return {key: logs[key] for key in spec}, (steps, arrays)

        first = None if endless else iterator.get_next_as_optional()
        arrays = {
            key: tf.TensorArray(value.dtype, size=0, dynamic_size=True, element_shape=value.shape)
            for key, value in fetched.items()
        }
        steps = tf.TensorArray(tf.int64, size=0, dynamic_size=True, element_shape=[])
        count, logs, nan, (steps, arrays) = steps_loop(
            one_step, spec, iterator, num_steps, first, record, (steps, arrays)
        )
        return count, logs, nan, steps.stack(), {key: a.stack() for key, a in arrays.items()}

    return tf.function(run, reduce_retracing=True, autograph=False)
