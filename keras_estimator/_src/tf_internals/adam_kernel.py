"""Routing the v1 `AdamOptimizer`'s dense resource updates.

Checked on TensorFlow 2.21 (and the same code in 2.15). The v1 optimizer
computes each dense update of a resource variable in its private
`_resource_apply_dense(grad, var)`, from its private hyperparameter tensors
(`_lr_t`, `_beta1_t`, `_beta2_t`, `_epsilon_t`, made by `_prepare` once per
`apply_gradients` call), its beta-power accumulators and its "m" and "v"
slots (`_slots`, filled for every variable before any update).

Private symbols touched: `AdamOptimizer._resource_apply_dense` (replaced
meanwhile), `_lr_t`, `_beta1_t`, `_beta2_t`, `_epsilon_t`, `_use_locking`,
`_slots` and `_get_beta_accumulators`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

TOUCHES = (
    "tensorflow.python.training.adam:AdamOptimizer.__dict__._resource_apply_dense",
    "tensorflow.python.training.adam:AdamOptimizer._get_beta_accumulators",
    "tensorflow.python.training.adam:AdamOptimizer.get_slot",
    "tensorflow.python.training.adam:AdamOptimizer()._lr_t",
    "tensorflow.python.training.adam:AdamOptimizer()._beta1_t",
    "tensorflow.python.training.adam:AdamOptimizer()._beta2_t",
    "tensorflow.python.training.adam:AdamOptimizer()._epsilon_t",
    "tensorflow.python.training.adam:AdamOptimizer()._use_locking",
    "tensorflow.python.training.adam:AdamOptimizer()._slots",
)

_adam_lock = threading.Lock()
_adam_users = [0]
_adam_kernel_method: list[Any] = []


class AdamDenseUpdate:
    """One dense `AdamOptimizer` update, as the kernel would make it."""

    def __init__(self, optimizer: Any, grad: Any, var: Any, kernel_method: Any) -> None:
        self._optimizer = optimizer
        self._kernel_method = kernel_method
        self.grad = grad
        self.var = var
        self.use_locking = bool(optimizer._use_locking)

    def call_key(self) -> Any:
        """Identifies the `apply_gradients` call this update belongs to."""
        return self._optimizer._lr_t.ref()

    def updated_elements(self) -> int | None:
        """Elements of all the variables the optimizer updates (None: unknown)."""
        total = 0
        for slot in self._optimizer._slots.get("m", {}).values():
            size = slot.shape.num_elements()
            if size is None:
                return None
            total += size
        return total

    def arguments(self) -> dict[str, Any]:
        """The kernel's inputs but var and grad, uncast."""
        optimizer = self._optimizer
        beta1_power, beta2_power = optimizer._get_beta_accumulators()
        return {
            "m": optimizer.get_slot(self.var, "m").handle,
            "v": optimizer.get_slot(self.var, "v").handle,
            "beta1_power": beta1_power,
            "beta2_power": beta2_power,
            "learning_rate": optimizer._lr_t,
            "beta1": optimizer._beta1_t,
            "beta2": optimizer._beta2_t,
            "epsilon": optimizer._epsilon_t,
        }

    def kernel_update(self) -> Any:
        """TensorFlow's own update op (`ResourceApplyAdam`)."""
        return self._kernel_method(self._optimizer, self.grad, self.var)


@contextlib.contextmanager
def v1_adam_dense_update(update: Any) -> Iterator[None]:
    """Routes `AdamOptimizer._resource_apply_dense` through `update` meanwhile.

    `update(AdamDenseUpdate)` returns the update op. The method is replaced
    while any thread is inside this context and TensorFlow's own is put back
    when none is, so Adam outside the Estimator's traces is untouched.
    Subclasses that define the method themselves keep theirs.
    """
    from tensorflow.python.training import adam

    with _adam_lock:
        if not _adam_users[0]:
            kernel_method = adam.AdamOptimizer.__dict__["_resource_apply_dense"]

            def _resource_apply_dense(optimizer: Any, grad: Any, var: Any) -> Any:
                return update(AdamDenseUpdate(optimizer, grad, var, kernel_method))

            _resource_apply_dense.__doc__ = kernel_method.__doc__
            adam.AdamOptimizer._resource_apply_dense = _resource_apply_dense
            _adam_kernel_method[:] = [kernel_method]
        _adam_users[0] += 1
    try:
        yield
    finally:
        with _adam_lock:
            _adam_users[0] -= 1
            if not _adam_users[0]:
                adam.AdamOptimizer._resource_apply_dense = _adam_kernel_method.pop()
