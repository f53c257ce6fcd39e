"""Top-level names that import their module on first use.

`import keras_estimator` stays cheap: TensorFlow and Keras are imported when a
program first reaches a name (`keras_estimator.Estimator`,
`from keras_estimator import RunConfig`, `keras_estimator.install()`), not
before. The command line (`keras-estimator --help`, `check`) therefore starts
without them. Each name resolves through the one table of public names and
is then stored on the module, so later lookups are ordinary attribute reads.
(The Keras backend is checked by the package's import, from the environment
and keras.json.)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence

from keras_estimator._src.base import missing_names, public_names


def getattr_for(module_name: str) -> Callable[[str], object]:
    """A module `__getattr__` serving `module_name`'s public names lazily.

    Names the table does not hold fall through to `missing_names`, which
    explains tf.estimator 2.15 names this package lacks.
    """
    rows = {row.name: row for row in public_names.entries_in(module_name)}
    missing = missing_names.getattr_for(module_name)
    # Public subpackages outside the table's names (`keras_estimator.
    # feature_column`) are reachable as attributes without their own import.
    subpackages = {
        namespace.rpartition(".")[2]
        for namespace in public_names.NAMESPACES
        if namespace.rpartition(".")[0] == module_name
    }

    def __getattr__(name: str) -> object:
        row = rows.get(name)
        if row is None and name not in subpackages:
            return missing(name)
        # No lock of its own: Python's import lock orders concurrent first
        # uses, and storing the same object twice is harmless.
        if row is None:
            value: object = importlib.import_module(f"{module_name}.{name}")
        else:
            value = row.resolve()
        setattr(sys.modules[module_name], name, value)
        return value

    return __getattr__


def dir_for(
    module_name: str, module_globals: dict[str, object]
) -> Callable[[], list[str]]:
    """A module `__dir__` listing the public names before they are loaded."""
    return listing(module_globals, public_names.names_in(module_name))


def listing(module_globals: dict[str, object], names: Sequence[str]) -> Callable[[], list[str]]:
    """A module `__dir__` listing `names` besides what the module holds already."""

    def __dir__() -> list[str]:
        return sorted(set(module_globals) | set(names))

    return __dir__


def submodules_getattr(module_name: str, submodules: Sequence[str]) -> Callable[[str], object]:
    """A module `__getattr__` importing `module_name`'s `submodules` on first use."""

    def __getattr__(name: str) -> object:
        if name not in submodules:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        value = importlib.import_module(f"{module_name}.{name}")
        setattr(sys.modules[module_name], name, value)
        return value

    return __getattr__

