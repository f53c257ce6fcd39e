"""The Python values a model_fn reads: `ModelFnState`, to know when a trace is stale.

tf.estimator 2.15 called the model_fn on every `train()`, `evaluate()` and
`predict()` call, each in a new graph, so a value the model_fn took from
Python (a module-level `LEARNING_RATE`, a closure variable, `FLAGS.lr`, an
attribute of the object whose method is the model_fn) was read again on
each call: a program that changed it between calls trained with the new one.
An Estimator here reuses the first call's trace, so it must know when such a
value changed and call the model_fn again.

`ModelFnState.of(model_fn)` records the values the model_fn's code can reach
by name: for each function of the program (not of TensorFlow, Keras, NumPy or
this package) reached from the model_fn, the globals and builtins its code
names, its closure variables and default arguments, the attributes its code
names on those values (`FLAGS.lr`, `args.batch_size`, `self.hparams`), and
the functions and classes it names, a few levels deep. A recorded value is
compared by equality when it is a plain value (numbers, strings, small
tuples, dicts and arrays of them), by identity otherwise (a list a program
logs into changes without changing a setting). `changed()` names the
first value that is no longer what was recorded.

What this does not see: a value reached otherwise (an item of a large or
nested container, a file the model_fn reads, a value computed at call time
such as the clock), or a change inside an object compared by identity.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import sysconfig
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

logger = logging.getLogger("keras_estimator")

# Packages whose functions are not followed: their behaviour does not change
# between calls of a program.
_LIBRARY_PACKAGES = frozenset(
    {
        "keras_estimator",
        "tensorflow",
        "tensorflow_estimator",
        "keras",
        "tf_keras",
        "numpy",
        "absl",
        "google",
        "pandas",
        "scipy",
        "h5py",
        "tensorboard",
        "builtins",
    }
)
# How many calls deep functions named by the model_fn are followed.
_MAX_DEPTH = 3
# Containers and arrays up to this size are compared by value.
_MAX_ITEMS = 64
# At most this many values are recorded (a bound on the check's cost).
_MAX_VALUES = 2000

_SIMPLE_TYPES = (type(None), bool, int, float, complex, str, bytes, np.generic)


def _library_paths() -> tuple[str, ...]:
    paths = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            paths.add(os.path.realpath(path))
    return tuple(sorted(paths))


_LIBRARY_PATHS = _library_paths()


class _Missing:
    def __repr__(self) -> str:
        return "<unset>"


_MISSING = _Missing()


class ModelFnState:
    """The values a model_fn reads from Python, as they were when recorded."""

    def __init__(self, watches: list[tuple[str, Callable[[], Any], Any]]) -> None:
        # (description, reader, what the value was)
        self._watches = watches

    @classmethod
    def of(cls, model_fn: Any) -> ModelFnState:
        """Records what `model_fn` can read from Python now."""
        collector = _Collector()
        try:
            collector.follow_callable(model_fn, "model_fn", depth=0)
        except Exception:  # noqa: BLE001 - an object that cannot be looked into
            # What was recorded before it is still watched; the call goes on.
            logger.debug("Stopped recording the model_fn's Python values.", exc_info=True)
        return cls(collector.watches)

    def __len__(self) -> int:
        return len(self._watches)

    def changed(self) -> str | None:
        """The first recorded value that changed, described, or None."""
        for description, read, then in self._watches:
            try:
                now = _frozen(read())
            except Exception:  # noqa: BLE001 - a value that cannot be read changed
                now = _MISSING
            if not _same(then, now):
                return description
        return None


class _Collector:
    def __init__(self) -> None:
        self.watches: list[tuple[str, Callable[[], Any], Any]] = []
        self._followed: set[int] = set()
        self._keep: list[Any] = []

    # ---- what is followed ----------------------------------------------------
    def follow_callable(self, value: Any, where: str, depth: int) -> None:
        if depth > _MAX_DEPTH or id(value) in self._followed or self._full():
            return
        self._followed.add(id(value))
        self._keep.append(value)
        if isinstance(value, functools.partial):
            self.follow_callable(value.func, where, depth)
            for index, arg in enumerate(value.args):
                self._watch_value(f"{where} argument {index}", arg, depth)
            for key, arg in (value.keywords or {}).items():
                self._watch_value(f"{where} argument {key}", arg, depth)
        elif isinstance(value, types.MethodType):
            function = value.__func__
            if isinstance(function, types.FunctionType) and _is_program_code(function):
                self._follow_function(function, where, depth, owner=value.__self__)
            else:
                # A library's wrapper (TPUEstimator's model_fn): the program's
                # callables it holds.
                self._follow_held_callables(value.__self__, where, depth)
        elif isinstance(value, types.FunctionType):
            self._follow_function(value, where, depth)
        elif isinstance(value, type):
            if _is_program_code(value):
                for name, member in list(vars(value).items()):
                    function = getattr(member, "__func__", member)
                    if isinstance(function, types.FunctionType):
                        self._follow_function(function, f"{where}.{name}", depth + 1)
        elif callable(value) and _is_program_code(type(value)):
            call = vars(type(value)).get("__call__")
            if isinstance(call, types.FunctionType):
                self._follow_function(call, where, depth, owner=value)

    def _follow_held_callables(self, owner: Any, where: str, depth: int) -> None:
        for name, held in list(getattr(owner, "__dict__", {}).items()):
            if isinstance(
                held, (types.FunctionType, types.MethodType, functools.partial)
            ):
                self.follow_callable(held, f"{where} ({name})", depth + 1)

    def _follow_function(
        self, function: types.FunctionType, where: str, depth: int, owner: Any = None
    ) -> None:
        if not _is_program_code(function):
            return
        code = function.__code__
        names = _names_of(code)
        if owner is not None:
            self._watch_attributes(f"{where} self", owner, names, depth)
        for index, default in enumerate(function.__defaults__ or ()):
            self._watch_value(f"{where} default {index}", default, depth, names)
        for key, default in (function.__kwdefaults__ or {}).items():
            self._watch_value(f"{where} default {key}", default, depth, names)
        for name, cell in zip(
            code.co_freevars, function.__closure__ or (), strict=False
        ):
            self._watch(
                f"{where}: closure variable {name!r}", _cell_reader(cell), names, depth
            )
        namespace = function.__globals__
        for name in names:
            if name in namespace:
                self._watch(
                    f"{where}: global {name!r}",
                    _item_reader(namespace, name),
                    names,
                    depth,
                )

    # ---- what is recorded ----------------------------------------------------
    def _watch(
        self,
        description: str,
        read: Callable[[], Any],
        names: frozenset[str],
        depth: int,
    ) -> None:
        try:
            value = read()
        except Exception:  # noqa: BLE001 - an empty cell
            return
        self._record(description, read, value)
        self._look_inside(description, value, names, depth)

    def _watch_value(
        self,
        description: str,
        value: Any,
        depth: int,
        names: frozenset[str] = frozenset(),
    ) -> None:
        # A value fixed in the function (a default, a partial's argument):
        # its identity cannot change, but what it holds can.
        self._look_inside(description, value, names, depth)
        if isinstance(value, (dict, np.ndarray)):
            self._record(description, lambda: value, value)

    def _look_inside(
        self, description: str, value: Any, names: frozenset[str], depth: int
    ) -> None:
        if isinstance(
            value, (types.FunctionType, types.MethodType, functools.partial, type)
        ):
            self.follow_callable(value, description, depth + 1)
            if isinstance(value, type) and _is_program_code(value):
                # Its class attributes (`HParams.units`).
                self._watch_attributes(description, value, names, depth)
        elif not isinstance(value, (*_SIMPLE_TYPES, types.ModuleType)) or (
            isinstance(value, types.ModuleType) and _is_program_module(value)
        ):
            self._watch_attributes(description, value, names, depth)

    def _watch_attributes(
        self, where: str, owner: Any, names: frozenset[str], depth: int
    ) -> None:
        """The attributes `names` on `owner` (`FLAGS.lr`, `self.hparams`)."""
        if isinstance(owner, types.ModuleType) and not _is_program_module(owner):
            return
        attributes = _attributes_of(owner)
        if attributes is None:
            return
        for name in names:
            read = attributes(name)
            if read is not None:
                description = f"{where}.{name}"
                value = read()
                self._record(description, read, value)
                if depth < _MAX_DEPTH and not isinstance(value, _SIMPLE_TYPES):
                    self._look_inside(description, value, names, depth + 1)

    def _record(self, description: str, read: Callable[[], Any], value: Any) -> None:
        if self._full():
            return
        self.watches.append((description, read, _frozen(value)))

    def _full(self) -> bool:
        return len(self.watches) >= _MAX_VALUES


# ---- reading -------------------------------------------------------------------
def _cell_reader(cell: Any) -> Callable[[], Any]:
    return lambda: cell.cell_contents


def _item_reader(namespace: dict[str, Any], name: str) -> Callable[[], Any]:
    return lambda: namespace.get(name, _MISSING)


def _attributes_of(owner: Any) -> Callable[[str], Callable[[], Any] | None] | None:
    """A function giving, per attribute name, a reader of `owner`'s attribute."""
    if type(owner).__name__ == "FlagValues" and hasattr(owner, "__contains__"):
        # absl's FLAGS: values live in flag objects, not in __dict__.
        def flag(name: str) -> Callable[[], Any] | None:
            if name in owner:
                return lambda: owner[name].value
            return None

        return flag
    namespace = getattr(owner, "__dict__", None)
    if not isinstance(namespace, (dict, types.MappingProxyType)):
        return None
    if not isinstance(owner, (types.ModuleType, type)) and not _is_program_code(
        type(owner)
    ):
        # An instance of a library class (a Keras layer, a tensor): its own
        # state is the library's.
        if type(owner).__module__ not in ("argparse", "types"):
            return None

    def attribute(name: str) -> Callable[[], Any] | None:
        if name in namespace:
            return lambda: vars(owner).get(name, _MISSING)
        return None

    return attribute


def _names_of(code: types.CodeType) -> frozenset[str]:
    """Every global and attribute name `code` and the code nested in it use."""
    names: set[str] = set()
    for each in _codes(code):
        names.update(each.co_names)
    return frozenset(names)


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _codes(constant)


# ---- what is program code -------------------------------------------------------
def _is_program_code(value: Any) -> bool:
    module = getattr(value, "__module__", None) or ""
    if module.partition(".")[0] in _LIBRARY_PACKAGES:
        return False
    code = getattr(value, "__code__", None)
    filename = code.co_filename if code is not None else _module_file(module)
    if not filename or filename.startswith("<frozen"):
        return module not in sys.builtin_module_names
    return not os.path.realpath(filename).startswith(_LIBRARY_PATHS)


def _is_program_module(module: types.ModuleType) -> bool:
    if module.__name__.partition(".")[0] in _LIBRARY_PACKAGES:
        return False
    filename = getattr(module, "__file__", None)
    if not isinstance(filename, str):
        return False
    return not os.path.realpath(filename).startswith(_LIBRARY_PATHS)


def _module_file(module_name: str) -> str | None:
    module = sys.modules.get(module_name)
    return getattr(module, "__file__", None)


# ---- comparing -------------------------------------------------------------------
class _Identity:
    """A value compared by identity (kept alive so its id is not reused)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Identity) and other.value is self.value

    __hash__ = None  # type: ignore[assignment]


def _frozen(value: Any) -> Any:
    """`value` as compared later: a plain copy of plain values, else its identity."""
    if isinstance(value, _SIMPLE_TYPES) or value is _MISSING:
        return ("plain", type(value), value)
    # A list or set is compared by identity: programs log into them (a list
    # the model_fn appends its calls to), and a changed log is no changed
    # setting. Tuples, and dicts of settings, are compared by value.
    if isinstance(value, (tuple, frozenset)) and len(value) <= _MAX_ITEMS:
        items = [_frozen(item) for item in value]
        if all(item[0] == "plain" for item in items):
            ordered = sorted(items, key=repr) if isinstance(value, frozenset) else items
            return ("plain", type(value), tuple(ordered))
    if isinstance(value, dict) and len(value) <= _MAX_ITEMS:
        pairs = [(_frozen(k), _frozen(v)) for k, v in value.items()]
        if all(k[0] == "plain" and v[0] == "plain" for k, v in pairs):
            return ("plain", dict, tuple(pairs))
    if (
        isinstance(value, np.ndarray)
        and value.size <= _MAX_ITEMS
        and value.dtype != object
    ):
        return ("plain", np.ndarray, (value.dtype.str, value.shape, value.tobytes()))
    return ("identity", _Identity(value))


def _same(then: Any, now: Any) -> bool:
    if then[0] != now[0]:
        return False
    if then[0] == "identity":
        return bool(then[1] == now[1])
    if then[1] is not now[1]:
        return False
    return _same_plain(then[2], now[2])


def _same_plain(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(
            _same_plain(x, y) for x, y in zip(a, b, strict=True)
        )
    try:
        return bool(a == b) or (_is_nan(a) and _is_nan(b))
    except Exception:  # noqa: BLE001 - values that do not compare differ
        return False


def _is_nan(value: Any) -> bool:
    return isinstance(
        value, (float, complex, np.floating, np.complexfloating)
    ) and bool(value != value)
