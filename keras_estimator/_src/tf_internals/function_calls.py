"""Calling a traced (concrete) function without re-binding its arguments.

Checked on TensorFlow 2.21.

Private symbols touched: `ConcreteFunction._call_flat`, the eager
context's `function_call_options` (its `executor_type`) and, for
`FlatCall`, the concrete function's inference `AtomicFunction` (its name,
outputs and call options, and the `InterpolateRuntimeError` that gives its
errors their Python traceback), the tape check
`record.could_possibly_record`, the cancellation context and
`execute.quick_execute`, the op execution every eager call ends in.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
from collections.abc import Iterator
from typing import Any

TOUCHES = (
    "tensorflow.python.eager.polymorphic_function.concrete_function"
    ":ConcreteFunction._call_flat",
    "tensorflow.python.eager.polymorphic_function.concrete_function"
    ":ConcreteFunction.captured_inputs",
    "tensorflow.python.eager.context:context",
    "tensorflow.python.eager.context:Context.function_call_options",
    "tensorflow.python.eager.context:FunctionCallOptions.executor_type",
    "tensorflow.python.eager.polymorphic_function.concrete_function"
    ":ConcreteFunction()._inference_function",
    "tensorflow.python.eager.polymorphic_function.atomic_function:AtomicFunction.call_flat",
    "tensorflow.python.eager.record:could_possibly_record",
    "tensorflow.python.eager.polymorphic_function.atomic_function:AtomicFunction.name",
    "tensorflow.python.eager.polymorphic_function.atomic_function:AtomicFunction.call_options",
    "tensorflow.python.eager.polymorphic_function.atomic_function:AtomicFunction.function_type",
    "tensorflow.python.eager.polymorphic_function.atomic_function:InterpolateRuntimeError",
    "tensorflow.python.eager.cancellation:context",
    "tensorflow.python.eager.execute:quick_execute",
)


def call_traced(concrete: Any, *args: Any, single_threaded: bool = False) -> Any:
    """Calls a traced (concrete) function on `args` without re-binding them.

    Checked on TensorFlow 2.21. `ConcreteFunction.__call__` matches its
    arguments against the traced signature and casts each captured variable on
    every call, about 0.3 ms: as much as a small training step. The private
    `_call_flat` takes the flattened inputs directly; the public call remains
    the fallback should it go away.

    With `single_threaded`, the call runs on TensorFlow's single-threaded
    executor, which runs every kernel in the calling thread instead of
    handing ready ops to the inter-op thread pool (see `step_call` for when
    that is allowed). The executor of the functions a thread calls is the
    eager context's thread-local `function_call_options.executor_type`,
    which has no public setter.
    """
    import tensorflow as tf

    call_flat = getattr(concrete, "_call_flat", None)
    if call_flat is None:
        return concrete(*args)
    flat = tf.nest.flatten(args, expand_composites=True)
    if not single_threaded:
        return call_flat(flat, concrete.captured_inputs)
    from tensorflow.python.eager import context

    eager = context.context()
    saved = eager.function_call_options
    eager.function_call_options = _single_threaded_options(saved)
    try:
        return call_flat(flat, concrete.captured_inputs)
    finally:
        eager.function_call_options = saved


class FlatCall:
    """Calls a traced function on flat tensors, for its flat outputs.

    Checked on TensorFlow 2.21. For a function called once per step (a
    step that fetches for hooks), what `call_traced` still does on every
    call costs a tenth of a small model's step: flattening the arguments
    (an iterator is a composite), reading the captured inputs again,
    looking for gradient tapes and packing the outputs into their
    structure. Here the captures are read once, the caller passes flat
    tensors, and the outputs come back as the flat list the function
    returns (`concrete.outputs`' order); the function runs the same kernels
    on the same inputs. While a gradient tape could record, the call goes
    through `ConcreteFunction._call_flat` as `call_traced` does.

    `usable` is False when TensorFlow lacks what this needs, or the
    function's captures are bound when it is called (collective keys under
    a strategy): callers then use `call_traced`.

    When nothing asks more of the call (no tape, no cancellation, eager
    execution, no control captures, no resource outputs to annotate), the
    function's op is executed directly, as `AtomicFunction.call_flat` ends
    up doing after its checks, with the call attributes worked out once per
    `function_call_options`; an error then gets the same Python traceback
    of the failing op that TensorFlow's own call gives it.

    Args:
        concrete: a traced `ConcreteFunction`.
    """

    def __init__(self, concrete: Any) -> None:
        self._concrete = concrete
        atomic = getattr(concrete, "_inference_function", None)
        self.usable = (
            atomic is not None
            and callable(getattr(atomic, "call_flat", None))
            and callable(getattr(concrete, "_call_flat", None))
            and not concrete.graph.deferred_external_captures
        )
        self._atomic: Any = atomic
        self._captures = list(concrete.captured_inputs) if self.usable else []
        self._direct = _direct_call(atomic) if self.usable else None
        # (the function_call_options they were made from, the call's attributes)
        self._attrs: tuple[Any, tuple[Any, ...]] | None = None

    def __call__(self, flat_args: list[Any], single_threaded: bool = False) -> list[Any]:
        from tensorflow.python.eager import context, record

        eager = context.context()
        saved = eager.function_call_options
        if single_threaded:
            eager.function_call_options = _single_threaded_options(saved)
        try:
            if record.could_possibly_record():
                import tensorflow as tf

                outputs = self._concrete._call_flat(list(flat_args), self._captures)
                return tf.nest.flatten(outputs, expand_composites=True)
            if self._direct is not None and eager.executing_eagerly():
                return self._execute(eager, [*flat_args, *self._captures])
            return list(self._atomic.call_flat(*flat_args, *self._captures))
        finally:
            if single_threaded:
                eager.function_call_options = saved

    def _execute(self, eager: Any, inputs: list[Any]) -> list[Any]:
        from tensorflow.python.eager import cancellation, execute

        if cancellation.context() is not None:
            return list(self._atomic.call_flat(*inputs))
        name, num_outputs, interpolating = self._direct  # type: ignore[misc]
        options = eager.function_call_options
        attrs = self._attrs
        if attrs is None or attrs[0] is not options:
            flat_attrs = tuple(itertools.chain(*options.as_attrs().items()))
            attrs = self._attrs = (options, flat_attrs)
        try:
            return list(execute.quick_execute(name, num_outputs, inputs, attrs[1], eager))
        except Exception as error:
            import tensorflow as tf

            if isinstance(error, tf.errors.OpError):
                with interpolating(self._atomic):
                    raise
            raise


def _direct_call(atomic: Any) -> tuple[str, int, Any] | None:
    """(op name, number of outputs, error interpolator) to execute `atomic`'s op, or None.

    None when its call must do more than execute the op: control captures
    to wait for, or outputs carrying handle data (resources, variants) that
    `AtomicFunction.call_flat` sets on them.
    """
    try:
        from tensorflow.python.eager import cancellation, execute  # noqa: F401
        from tensorflow.python.eager.polymorphic_function import atomic_function

        interpolating = atomic_function.InterpolateRuntimeError
        outputs = list(atomic.function_type.flat_outputs)
        if atomic.call_options.control_captures:
            return None
        if any(getattr(output.dtype, "_handle_data", None) for output in outputs):
            return None
        name = atomic.name
        return (name.decode("utf-8") if isinstance(name, bytes) else name, len(outputs),
                interpolating)
    except (AttributeError, ImportError, TypeError):
        return None


@contextlib.contextmanager
def single_threaded_calls() -> Iterator[None]:
    """Runs the traced functions this thread calls meanwhile on the single-threaded executor.

    As `call_traced(..., single_threaded=True)` does for one call, for code
    that calls traced functions itself.
    """
    from tensorflow.python.eager import context

    eager = context.context()
    saved = eager.function_call_options
    eager.function_call_options = _single_threaded_options(saved)
    try:
        yield
    finally:
        eager.function_call_options = saved


_SINGLE_THREADED_EXECUTOR = "SINGLE_THREADED_EXECUTOR"
_single_threaded_cache: list[Any] = [None, None]


def _single_threaded_options(options: Any) -> Any:
    """`options` (a FunctionCallOptions) with the single-threaded executor."""
    if _single_threaded_cache[0] is not options:
        single = copy.copy(options)
        single.executor_type = _SINGLE_THREADED_EXECUTOR
        _single_threaded_cache[:] = [options, single]
    return _single_threaded_cache[1]
