"""Keras 2 idioms of TensorFlow 2.x model_fns that Keras 3 refuses, accepted in a model_fn.

Two idioms of programs written for tf.estimator on TensorFlow 2.x:

* `tf.group(optimizer.apply_gradients(...), global_step.assign_add(1))`. A
  Keras 2 optimizer returned an operation there; a Keras 3 optimizer returns
  its `iterations` variable, a Keras variable, which `tf.group` refuses
  ("'inputs' should be zero or more (nested) Tensors"). In a model_fn the
  value is grouped as a read of that variable, traced after the update, so
  the group waits for it as it waited for Keras 2's operation.
* `optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()`,
  which made a Keras 2 optimizer count its steps in the global step (learning
  rate schedules and Adam's bias correction read it, and `apply_gradients`
  advances it). Keras 3's `iterations` has no setter. In a model_fn it is set
  as Keras 2 set it: before the optimizer's first update, else the
  RuntimeError Keras 2 raised.
* A v1 optimizer given Keras layers' variables:
  `tf.compat.v1.train.AdagradOptimizer(0.05).minimize(loss,
  var_list=model.trainable_variables, global_step=...)`, TensorFlow's
  migration guide's TF2 model_fn. Keras 2 variables were tf.Variables; a
  Keras 3 variable wraps one, and v1 optimizers fail on it with an internal
  AttributeError ('_in_graph_mode'). In a model_fn, `compute_gradients` and
  `apply_gradients` (so `minimize` too) get the tf.Variable each Keras
  variable wraps, which the Keras layer reads: its slots take 2.15's names.

While some thread calls a model_fn, `tf.group` of the public namespaces
(`tf`, `tf.compat.v1`, `tf.compat.v2`) is this module's function, Keras'
optimizer `iterations` property has a setter, and the two methods of
`tf.compat.v1.train.Optimizer` and Keras' `apply_gradients` are this
module's (which also note the optimizers a building trace uses, for
`recording_optimizers`); they change nothing for
other threads (the setter raises Keras 3's AttributeError there), and
TensorFlow's and Keras' own are put back when no thread is inside a model_fn.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import keras
import tensorflow as tf

from keras_estimator._src.engine.variable_store import as_tf_variable
from keras_estimator._src.tf_internals import api_modules, optimizer_state

# The class that defines Keras' `iterations` property (its backend-neutral base).
_BaseOptimizer = next(
    cls for cls in keras.optimizers.Optimizer.__mro__ if "iterations" in vars(cls)
)

_lock = threading.Lock()
_users = [0]
_put_back: list[tuple[Any, str, Any]] = []  # (owner, attribute, Keras' or TF's value)
_active = threading.local()


@contextlib.contextmanager
def accepted(unsave: Callable[[list[Any]], None]) -> Iterator[None]:
    """Lets this thread's model_fn meanwhile use the Keras 2 idioms above.

    Args:
        unsave: Called with the variables that checkpoints no longer need to
            hold (an optimizer's own step counter, once it counts in the
            global step).
    """
    with _lock:
        if not _users[0]:
            _replace_group()
            _add_iterations_setter()
            _convert_v1_optimizer_variables()
        _users[0] += 1
    depth = getattr(_active, "depth", 0)
    outer_unsave = getattr(_active, "unsave", None)
    _active.depth = depth + 1
    _active.unsave = unsave
    try:
        yield
    finally:
        _active.depth = depth
        _active.unsave = outer_unsave
        with _lock:
            _users[0] -= 1
            if not _users[0]:
                while _put_back:
                    owner, attribute, original = _put_back.pop()
                    setattr(owner, attribute, original)


def unsave(variables: list[Any]) -> None:
    """Keeps the variables out of checkpoints, when made by this thread's model_fn.

    For settings objects a model_fn makes and then discards (a Keras
    optimizer whose configuration a canned estimator reads).
    """
    outer = getattr(_active, "unsave", None)
    if outer is not None and variables:
        outer(list(variables))


def _in_model_fn() -> bool:
    return bool(getattr(_active, "depth", 0))


@contextlib.contextmanager
def recording_optimizers() -> Iterator[list[Any]]:
    """Lists the optimizers (v1 or Keras) whose `apply_gradients` the model_fn calls.

    Used around a building trace (inside `accepted`), so the Keras callbacks
    of a model_fn Estimator can see its optimizer (`callback_model`).
    """
    outer = getattr(_active, "optimizers", None)
    seen: list[Any] = []
    _active.optimizers = seen
    try:
        yield seen
    finally:
        _active.optimizers = outer


def _record_optimizer(optimizer: Any) -> None:
    seen = getattr(_active, "optimizers", None)
    if seen is not None and not any(o is optimizer for o in seen):
        seen.append(optimizer)


def _swap(owner: Any, attribute: str, replacement: Any) -> None:
    """Sets `owner.attribute`, to be put back when no thread is in a model_fn."""
    _put_back.append((owner, attribute, vars(owner)[attribute]))
    setattr(owner, attribute, replacement)


# ------------------------------------------------------------------ tf.group


def _replace_group() -> None:
    original = tf.group

    def group(*inputs: Any, **kwargs: Any) -> Any:
        if _in_model_fn():
            inputs = tf.nest.map_structure(_groupable, inputs)
        return original(*inputs, **kwargs)

    group.__doc__ = original.__doc__
    group.__wrapped__ = original  # type: ignore[attr-defined]
    for name, module in list(sys.modules.items()):
        if api_modules.is_api_module(name) and getattr(module, "group", None) is original:
            _swap(module, "group", group)


def _groupable(value: Any) -> Any:
    if isinstance(value, keras.Variable):
        return tf.convert_to_tensor(value)
    return value


# ------------------------------------------------------ optimizer.iterations


def _add_iterations_setter() -> None:
    original = _BaseOptimizer.__dict__["iterations"]

    def set_iterations(optimizer: Any, variable: Any) -> None:
        if not _in_model_fn():
            raise AttributeError(
                f"property 'iterations' of {type(optimizer).__name__!r} object has "
                "no setter"
            )
        _set_iterations(optimizer, variable)

    setter = property(original.fget, set_iterations, original.fdel, original.__doc__)
    _swap(_BaseOptimizer, "iterations", setter)


def _set_iterations(optimizer: Any, variable: Any) -> None:
    if getattr(optimizer, "built", False):
        raise RuntimeError(
            "Cannot set `iterations` of the optimizer after its first update "
            f"(apply_gradients) created its weights; got {variable!r}. Set it "
            "before calling apply_gradients()."
        )
    dtype = getattr(variable, "dtype", None)
    if not isinstance(variable, tf.Variable | keras.Variable) or not (
        tf.as_dtype(dtype).is_integer
    ):
        raise TypeError(
            "optimizer.iterations must be set to an integer variable, such as "
            f"tf.compat.v1.train.get_or_create_global_step(); got {variable!r}."
        )
    if optimizer.gradient_accumulation_steps:
        raise ValueError(
            "optimizer.iterations cannot be set on an optimizer with "
            f"gradient_accumulation_steps={optimizer.gradient_accumulation_steps}: "
            "its iterations count accumulated batches, not steps."
        )
    # The optimizer's own counter is no longer saved: the global step is its
    # count, saved as the global step.
    _active.unsave([optimizer_state.count_steps_in(optimizer, variable)])


# ------------------------------------------ v1 optimizers on Keras variables


def _convert_v1_optimizer_variables() -> None:
    optimizer_class = tf.compat.v1.train.Optimizer
    compute = vars(optimizer_class)["compute_gradients"]
    apply = vars(optimizer_class)["apply_gradients"]

    @functools.wraps(compute)
    def compute_gradients(
        optimizer: Any, loss: Any, var_list: Any = None, *args: Any, **kwargs: Any
    ) -> Any:
        if var_list is not None and _in_model_fn():
            var_list = [_wrapped_variable(v) for v in var_list]
        return compute(optimizer, loss, var_list, *args, **kwargs)

    @functools.wraps(apply)
    def apply_gradients(
        optimizer: Any, grads_and_vars: Any, *args: Any, **kwargs: Any
    ) -> Any:
        if _in_model_fn():
            grads_and_vars = [(g, _wrapped_variable(v)) for g, v in grads_and_vars]
            _record_optimizer(optimizer)
        return apply(optimizer, grads_and_vars, *args, **kwargs)

    keras_apply = vars(_BaseOptimizer)["apply_gradients"]

    @functools.wraps(keras_apply)
    def keras_apply_gradients(optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        if _in_model_fn():
            _record_optimizer(optimizer)
        return keras_apply(optimizer, *args, **kwargs)

    _swap(optimizer_class, "compute_gradients", compute_gradients)
    _swap(optimizer_class, "apply_gradients", apply_gradients)
    _swap(_BaseOptimizer, "apply_gradients", keras_apply_gradients)


def _wrapped_variable(value: Any) -> Any:
    wrapped = as_tf_variable(value)
    return value if wrapped is None else wrapped
