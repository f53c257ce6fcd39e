"""Redirecting the tf.compat.v1 dataset iterator constructors.

Checked on TensorFlow 2.21. `tf.compat.v1.data.make_one_shot_iterator`,
`make_initializable_iterator` and the deprecated `Dataset.make_*_iterator`
methods all end in the private `DatasetV1._make_one_shot_iterator` and
`DatasetV1._make_initializable_iterator` (a V2 dataset is first wrapped in
a `DatasetV1Adapter`). TensorFlow has no public hook to see the iterators
an input_fn makes; these two methods are replaced while a thread has a
redirect active and restored when no thread has one.

Private symbols touched: `DatasetV1._make_one_shot_iterator` and
`DatasetV1._make_initializable_iterator` (replaced meanwhile).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

TOUCHES = (
    "tensorflow.python.data.ops.dataset_ops:DatasetV1.__dict__._make_one_shot_iterator",
    "tensorflow.python.data.ops.dataset_ops"
    ":DatasetV1.__dict__._make_initializable_iterator",
)

_iterator_redirect_lock = threading.Lock()
_iterator_redirect_users = [0]
_iterator_redirects = threading.local()
_restore_iterators: list[Any] = []


def redirected() -> bool:
    """Whether this thread's v1 iterator constructors are redirected now."""
    return bool(getattr(_iterator_redirects, "stack", None))


@contextlib.contextmanager
def redirect_v1_iterators(make_iterator: Callable[[Any], Any]) -> Iterator[None]:
    """Makes this thread's v1 iterator constructors call `make_iterator(dataset)`.

    Other threads keep TensorFlow's constructors. Redirects nest: the
    innermost one wins until it ends.
    """
    from tensorflow.python.data.ops import dataset_ops

    dataset_class = dataset_ops.DatasetV1
    with _iterator_redirect_lock:
        if _iterator_redirect_users[0] == 0:
            originals = (
                dataset_class.__dict__["_make_one_shot_iterator"],
                dataset_class.__dict__["_make_initializable_iterator"],
            )

            def one_shot(dataset: Any) -> Any:
                stack = getattr(_iterator_redirects, "stack", None)
                if stack:
                    return stack[-1](dataset)
                return originals[0](dataset)

            def initializable(dataset: Any, shared_name: Any = None) -> Any:
                stack = getattr(_iterator_redirects, "stack", None)
                if stack:
                    return stack[-1](dataset)
                return originals[1](dataset, shared_name)

            dataset_class._make_one_shot_iterator = one_shot
            dataset_class._make_initializable_iterator = initializable
            _restore_iterators[:] = [originals]
        _iterator_redirect_users[0] += 1
    stack = _iterator_redirects.__dict__.setdefault("stack", [])
    stack.append(make_iterator)
    try:
        yield
    finally:
        stack.pop()
        with _iterator_redirect_lock:
            _iterator_redirect_users[0] -= 1
            if _iterator_redirect_users[0] == 0:
                one_shot_method, initializable_method = _restore_iterators.pop()
                dataset_class._make_one_shot_iterator = one_shot_method
                dataset_class._make_initializable_iterator = initializable_method
