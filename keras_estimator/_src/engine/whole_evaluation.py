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

On a CPU-only process the call runs on TensorFlow's single-threaded
executor when every function it reaches allows it (`runs_on_one_thread`):
the evaluation's loop is then traced with functional control flow, which
that executor runs (the `While` runs its body as a function, each batch's
ops in one thread), where the default executor hands every op of every
batch to its inter-op thread pool. The ops and their order within a batch
are the same; only who runs them changes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator._src.engine import fused_loop, inputs, step_call
from keras_estimator._src.engine.run_plan import MAX_FUSED_STEPS
from keras_estimator._src.tf_internals import function_calls


class SingleThreadRefused(Exception):
    """TensorFlow refused the single-threaded executor for an evaluation call.

    The static check (`runs_on_one_thread`) is meant to make this
    impossible; the caller runs the evaluation again on the default
    executor, from a new iterator, with its metrics reset.
    """


class WholeEvaluation:
    """Builds and caches the one-call evaluation functions of one model."""

    def __init__(self) -> None:
        # Keyed by the loop's and values function's ids: each entry holds
        # them, and whether the function runs on the single-threaded executor.
        self._functions: dict[tuple[int, int, bool, bool], list[Any]] = {}
        # id(shared evaluation step) -> (that step, its fused loop).
        self._loops: dict[int, tuple[Any, Any]] = {}
        # False once TensorFlow refused the single-threaded executor.
        self._one_thread = True

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
            iterator: the input iterator; or a small input
                (`inputs.is_small_input`) that one call reads whole
                (`fits_one_call`), whose iterator the call makes as
                `inputs.make_iterator` would, saving that call.
            steps: the most batches to run; None for all.
            loop: the evaluation's fused loop: traced for `iterator`
                (`StepFunctions.evaluation_loop`), or `loop(...)`'s.
            values: the function reading the final metric values, or False.
            metrics: the Keras model's metrics, reset first as Keras'
                `evaluate` resets them.

        Returns:
            The logs as `Estimator.evaluate` builds them from Keras'
            `evaluate` and the final metric values (these override the last
            step's), and the steps run.
        """
        in_call = isinstance(iterator, tf.data.Dataset)
        ran = 0
        first = True
        logs: Any = {}
        results: Any = {}
        finals: Any = {}
        while True:
            chunk = MAX_FUSED_STEPS if steps is None else min(steps - ran, MAX_FUSED_STEPS)
            if chunk <= 0:
                break
            entry = self._entry(loop, values, metrics, first, iterator)
            try:
                count, chunk_logs, chunk_results, chunk_finals = function_calls.call_traced(
                    entry[0], iterator, tf.constant(chunk, tf.int32), single_threaded=entry[3]
                )
            except (tf.errors.FailedPreconditionError, tf.errors.UnimplementedError) as error:
                if not entry[3] or step_call.REFUSAL not in str(error):
                    raise
                # Traced again as TensorFlow traces, for the default executor.
                self._one_thread = False
                self._functions.clear()
                raise SingleThreadRefused(str(error)) from error
            first = False
            count = int(count)
            ran += count
            if count:
                logs, results, finals = chunk_logs, chunk_results, chunk_finals
            if count < chunk or in_call:  # a call making its iterator reads all
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

    @staticmethod
    def fits_one_call(dataset: tf.data.Dataset, steps: int | None) -> bool:
        """Whether one call reads all that an evaluation of `steps` batches of `dataset` reads.

        Then the iterator of a small input (`inputs.is_small_input`, whose
        number of batches is known) can be made inside the call (`run`
        given the dataset) and end with it.
        """
        if steps is not None:
            return steps <= MAX_FUSED_STEPS
        return 0 <= int(dataset.cardinality()) <= MAX_FUSED_STEPS

    def loop(self, step: Any, logs_spec: Callable[[], Any]) -> Any:
        """The evaluation's fused loop of `step` (a shared step: `StepFunctions.prebuild`).

        The same loop of the same step as the evaluation's fused function
        (`fused_loop.fused_steps`), traced here into the one-call function,
        so that its control flow can stay functional (see `_entry`).
        """
        loop = self._loops.get(id(step))
        if loop is None or loop[0] is not step:
            loop = self._loops[id(step)] = (step, _StepLoop(step, logs_spec))
        return loop[1]

    def _entry(
        self, loop: Any, values: Any, metrics: list[Any], reset: bool, iterator: Any
    ) -> list[Any]:
        """[function, loop, values, single-threaded] for this loop, values and reset.

        The function is traced first with functional control flow
        (`functional_control_flow`): the calls it traces then run on the
        single-threaded executor wherever it runs, so where it cannot
        (`runs_on_one_thread`: the model_fn's step has control flow of its
        own, say) it is traced again as TensorFlow traces it.
        """
        in_call = isinstance(iterator, tf.data.Dataset)
        key = (id(loop), id(values), reset, in_call)
        entry = self._functions.get(key)
        if entry is None:
            if in_call:
                source = tf.data.DatasetSpec(iterator.element_spec)
            elif hasattr(loop, "structured_input_signature"):
                source = _iterator_spec(loop)
            else:
                source = tf.type_spec_from_value(iterator)
            signature = (source, tf.TensorSpec([], tf.int32))

            def trace() -> Any:
                # A loop of a shared step is traced anew in each trace.
                callee = loop.fused() if isinstance(loop, _StepLoop) else loop
                return _compile(callee, values, metrics, reset, in_call).get_concrete_function(
                    *signature
                )

            single = self._one_thread and not step_call.has_accelerators()
            if single:
                try:
                    with functional_control_flow():
                        function = trace()
                except (tf.errors.FailedPreconditionError, tf.errors.UnimplementedError) as error:
                    # A function the trace ran eagerly could not run on one thread.
                    if step_call.REFUSAL not in str(error):
                        raise
                    single = False
                else:
                    single = runs_on_one_thread(function.graph)
            if not single:
                function = trace()
            entry = self._functions[key] = [function, loop, values, single]
        return entry


class _StepLoop:
    """The evaluation's fused loop of a shared step, traced where it is called."""

    def __init__(self, step: Any, logs_spec: Callable[[], Any]) -> None:
        self.step = step
        self.logs_spec = logs_spec

    def fused(self) -> Any:
        """A new `fused_loop.fused_steps` function of the step (not traced yet)."""
        return fused_loop.fused_steps(self.step.fused_step(), self.logs_spec)


@contextlib.contextmanager
def functional_control_flow() -> Iterator[None]:
    """Within: control flow traced stays functional, where it can run on one thread.

    tf.function lowers `tf.while_loop` and `tf.cond` to Switch/Merge, which
    the single-threaded executor cannot run, unless they are traced while
    the thread's functions run on that executor. Nothing changes with an
    accelerator, whose functions never run on it.
    """
    if step_call.has_accelerators():
        yield
        return
    with function_calls.single_threaded_calls():
        yield


def runs_on_one_thread(graph: tf.Graph) -> bool:
    """Whether the single-threaded executor runs `graph` and every function it reaches.

    `step_call.allows_single_thread`, with functional control flow allowed
    where it is not lowered. A body function is instantiated only when its
    loop first runs, after the call's first ops: a refusal there would come
    too late to fall back cleanly, so every function of the library is
    checked before the call.
    """
    return step_call.allows_single_thread(graph, functional_control_flow=True)


def _iterator_spec(loop: Any) -> Any:
    """The iterator argument's spec of a traced (iterator, steps) loop."""
    return loop.structured_input_signature[0][0]


def _compile(loop: Any, values: Any, metrics: list[Any], reset: bool, in_call: bool) -> Any:
    def evaluation(source: Any, num_steps: tf.Tensor) -> Any:
        iterator = inputs.small_input_iterator(source) if in_call else source
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
