"""Quiet TensorFlow's deprecation notices for the package's own calls.

Checked on TensorFlow 2.21.

The canned estimators, feature-column parsing and export build on TensorFlow
APIs that TensorFlow marks deprecated (`input_layer`, `linear_model`,
`make_parse_example_spec`, `build_tensor_info`, the `_FeatureColumn` methods
they reach, TensorFlow's internal Keras 2 layers behind `linear_model`). Their
notices describe this package's code, not the program's, and a user can do
nothing about them. Inside `quiet()` they are not printed; the same API
called by the program itself later still gets its notice (TensorFlow prints
each notice once per process, and a silenced call does not count).

Private symbols touched: `tensorflow.python.util.deprecation.
_PRINT_DEPRECATION_WARNINGS`, the switch TensorFlow's own `silence()` flips.
`silence()` is not re-entrant across threads (each exit restores what its
entry saw), so the switch is set here under one lock with a depth count: the
notices come back when the last quiet block of any thread ends.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Iterator
from typing import Any

TOUCHES = ("tensorflow.python.util.deprecation:_PRINT_DEPRECATION_WARNINGS",)

# UserWarnings of TensorFlow's internal Keras 2 layers, which
# tf.compat.v1.feature_column.linear_model builds on.
_LEGACY_LAYER_WARNINGS = r"`layer\.(add_variable|updates)`"

_lock = threading.Lock()
_depth = 0
_saved: dict[str, Any] = {}


def _enter() -> None:
    global _depth
    from tensorflow.python.util import deprecation

    with _lock:
        if _depth == 0:
            _saved["print"] = deprecation._PRINT_DEPRECATION_WARNINGS
            deprecation._PRINT_DEPRECATION_WARNINGS = False
            _saved["warnings"] = catcher = warnings.catch_warnings()
            catcher.__enter__()
            warnings.filterwarnings(
                "ignore", message=_LEGACY_LAYER_WARNINGS, category=UserWarning
            )
        _depth += 1


def _exit() -> None:
    global _depth
    from tensorflow.python.util import deprecation

    with _lock:
        _depth -= 1
        if _depth == 0:
            deprecation._PRINT_DEPRECATION_WARNINGS = _saved.pop("print")
            _saved.pop("warnings").__exit__(None, None, None)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No TensorFlow deprecation notices for the calls made inside the block."""
    _enter()
    try:
        yield
    finally:
        _exit()
