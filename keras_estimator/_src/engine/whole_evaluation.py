"""`evaluate()` in one compiled call when nothing watches its batches.

Keras' `evaluate` resets the model's metrics, calls the evaluation's fused
loop until the input ends, reads the metrics' results, and the Estimator then
reads each eval metric's final value: a dozen eager operations and Keras'
callback and epoch machinery around one compiled call, about as long as the
20 batches of a small model's evaluation. With no hook and no Keras callback
to see the batches, one device and no strategy, `evaluate()` instead runs one
compiled function per up to `MAX_FUSED_STEPS` batches that resets the
metrics (first call only), runs the same fused loop of the same traced
evaluation step, and reads the metrics' results and the final metric values
after it. The values are those of the Keras path (the same traced step and
the same reads, in the same order), and so are the steps counted and the
logs built from them (`python_logs` follows Keras' own conversion).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator._src.engine.run_plan import MAX_FUSED_STEPS
from keras_estimator._src.tf_internals import function_calls


class WholeEvaluation:
    """Builds and caches the one-call evaluation functions of one model."""

    def __init__(self) -> None:
        # Keyed by the loop's and values function's ids: each entry holds them.
        self._functions: dict[tuple[int, int, bool], tuple[Any, Any, Any]] = {}

    def run(
        self,
        iterator: Any,
        steps: int | None,
        loop: Any,
        values: Any,
        metrics: list[Any],
    ) -> tuple[dict[str, Any], int]:
        """Evaluates `steps` batches of `iterator` (all when None).

        Args:
            iterator: the input iterator.
            steps: the most batches to run; None for all.
            loop: the evaluation's fused loop traced for `iterator`
                (`StepFunctions.evaluation_loop`).
            values: the function reading the final metric values, or False.
            metrics: the Keras model's metrics, reset first as Keras'
                `evaluate` resets them.

        Returns:
            The logs as `Estimator.evaluate` builds them from Keras'
            `evaluate` and the final metric values (these override the last
            step's), and the steps run.
        """
        ran = 0
        first = True
        logs: Any = {}
        results: Any = {}
        finals: Any = {}
        while True:
            chunk = MAX_FUSED_STEPS if steps is None else min(steps - ran, MAX_FUSED_STEPS)
            if chunk <= 0:
                break
            function = self._function(loop, values, metrics, first)
            count, chunk_logs, chunk_results, chunk_finals = function_calls.call_traced(
                function, iterator, tf.constant(chunk, tf.int32)
            )
            first = False
            count = int(count)
            ran += count
            if count:
                logs, results, finals = chunk_logs, chunk_results, chunk_finals
            if count < chunk:
                break
        if not ran:
            return {}, 0
        # What Keras' evaluate returns: the metrics' results when their names
        # are the logs' keys, else the last step's logs.
        named = results if set(logs) == set(results) else logs
        out = python_logs(named)
        out.update(
            {
                name: tf.nest.map_structure(lambda v: v.numpy(), value)
                for name, value in finals.items()
            }
        )
        return out, ran

    def _function(self, loop: Any, values: Any, metrics: list[Any], reset: bool) -> Any:
        key = (id(loop), id(values), reset)
        entry = self._functions.get(key)
        if entry is None:
            function = _compile(loop, values, metrics, reset).get_concrete_function(
                _iterator_spec(loop), tf.TensorSpec([], tf.int32)
            )
            entry = self._functions[key] = (function, loop, values)
        return entry[0]


def _iterator_spec(loop: Any) -> Any:
    """The iterator argument's spec of a traced (iterator, steps) loop."""
    return loop.structured_input_signature[0][0]


def _compile(loop: Any, values: Any, metrics: list[Any], reset: bool) -> Any:
    def evaluation(iterator: Any, num_steps: tf.Tensor) -> Any:
        if reset:
            for metric in metrics:
                metric.reset_state()
        count, logs = loop(iterator, num_steps)
        after = [count, *tf.nest.flatten(logs, expand_composites=True)]
        with tf.control_dependencies(after):
            results: dict[str, Any] = {}
            for metric in metrics:
                result = metric.result()
                if isinstance(result, dict):
                    results.update(result)
                else:
                    results[metric.name] = result
            results = tf.nest.map_structure(tf.identity, results)
            finals = values() if values is not False else {}
        return count, logs, results, finals

    return tf.function(evaluation, autograph=False)


def python_logs(logs: dict[str, Any]) -> dict[str, Any]:
    """Logs as Keras' `evaluate` returns them: flat, sorted by key, numbers as floats.

    Nested dicts are merged in; a tensor becomes a numpy array, then a
    float where `float()` takes it; anything else is kept as it is.
    """
    out: dict[str, Any] = {}
    for key, value in sorted(logs.items()):
        if isinstance(value, dict):
            out.update(python_logs(value))
            continue
        try:
            if tf.is_tensor(value):
                value = np.array(value)
            value = float(value)
        except Exception:  # noqa: BLE001 - Keras keeps what float() refuses
            pass
        out[key] = value
    return out
