"""Zero-change mode: `install()` makes `tf.estimator` resolve to this package.

After `keras_estimator.install()`, a program written for tf.estimator 2.15
runs unmodified in the same process:

* `tf.estimator` (and `tf.compat.v2.estimator`) is `keras_estimator`;
* `tf.compat.v1.estimator` is `keras_estimator.compat.estimator`;
* `tf.compat.v1.layers` is `keras_estimator.compat.layers`;
* `tf.keras.estimator.model_to_estimator` is this package's;
* `tf.keras.layers.DenseFeatures` (also reached as
  `tf.compat.v1.keras.layers.DenseFeatures`), which Keras 3 dropped, is this
  package's Keras 3 layer; a Keras that still has one keeps its own;
* `tf.keras.optimizers.legacy.{Adagrad,Adam,Ftrl,RMSprop,SGD,Optimizer}`,
  which raise ImportError in Keras 3, are this package's stand-ins for
  canned estimators (`canned.legacy_optimizers`);
* `tf.compat.v1.keras.utils.DeterministicRandomTestTool`, which Keras 3
  dropped and TensorFlow's migration guides use around a TF1 model_fn, is
  this package's (`zero_change.deterministic_random`);
* `tf.losses` / `tf.keras.losses` gain the lowercase loss functions 2.15
  had under long names (`mean_squared_error`, `mean_absolute_error`, ...),
  which Keras 3 keeps only in `keras.losses`;
* `tf.compat.v1.disable_eager_execution()` and `disable_v2_behavior()` warn
  once and leave eager execution on (see `graph_mode`);
* the stock hooks and `SessionRunHook` types under `tf.compat.v1.train` are
  this package's classes;
* `sys.modules` gains `tensorflow.estimator`, `tensorflow.compat.v1.estimator`
  (and their `experimental` / `export` / `inputs` submodules),
  `tensorflow.compat.v1.layers` and a small `tensorflow_estimator` stand-in,
  so `import tensorflow.estimator` and `from tensorflow.estimator import X`
  work too.

TensorFlow reaches one namespace through several module objects
(`tf.compat.v1`, the module `import tensorflow.compat.v1` binds,
`tf.compat.v2.compat.v1`, ...); each is patched. Every change is recorded
with what it replaced, and `uninstall()` puts all of it back. Only public
module attributes and `sys.modules` are touched: TensorFlow's module
wrappers forward `setattr`/`delattr` to the modules they wrap.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

from keras_estimator._src.base import graph_mode as _graph_mode
from keras_estimator._src.base import public_names
from keras_estimator._src.canned.legacy_optimizers import LEGACY_NAMES
from keras_estimator._src.feature_column.dense_features import DenseFeatures
from keras_estimator._src.tf_internals import api_modules

logger = logging.getLogger("keras_estimator")

# `tf.compat.v1.train` names replaced by this package's classes.
TRAIN_NAMES = tuple(public_names.names_in(public_names.V1_TRAIN))

_MISSING: Any = object()


@dataclasses.dataclass(frozen=True)
class _Change:
    """One attribute (owner is a module) or sys.modules entry (owner None)."""

    owner: Any
    name: str
    old: Any  # _MISSING when there was nothing to restore

    @property
    def label(self) -> str:
        if self.owner is None:
            return f"sys.modules[{self.name!r}]"
        return f"{self.owner.__name__}.{self.name}"


@dataclasses.dataclass(frozen=True)
class Installation:
    """What `install()` patched; also a context manager that undoes it.

    Attributes:
        patched: The patched names, as `module.attribute` or
            `sys.modules['name']`, in the order they were patched.
        newly_installed: False when an earlier `install()` had already
            patched everything; leaving a `with` block then leaves the
            patches in place, for the earlier caller to undo.
    """

    patched: tuple[str, ...]
    newly_installed: bool

    def __enter__(self) -> Installation:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.newly_installed:
            uninstall()


_lock = threading.Lock()
_changes: list[_Change] | None = None  # None while not installed


def install() -> Installation:
    """Makes `tf.estimator`, `tf.compat.v1.estimator` and friends this package.

    Call it once, before the program uses `tf.estimator`; later calls change
    nothing. Nothing is patched unless this is called.

    Returns:
        An `Installation` listing what was patched; usable as a context
        manager (`with keras_estimator.install(): ...`) that uninstalls on
        exit.

    Example:
        >>> import keras_estimator; keras_estimator.install()  # doctest: +SKIP
        >>> import tensorflow as tf  # doctest: +SKIP
        >>> tf.estimator.Estimator is keras_estimator.Estimator  # doctest: +SKIP
        True
    """
    global _changes
    with _lock:
        if _changes is not None:
            return Installation(tuple(c.label for c in _changes), False)
        wanted = _wanted_patches()
        # Every old value is read before anything is set, so no patch is
        # mistaken for an original.
        changes = [
            _Change(owner, name, _current(owner, name)) for owner, name, _ in wanted
        ]
        try:
            for owner, name, value in wanted:
                _assign(owner, name, value)
        except BaseException:
            _restore(changes)
            raise
        _changes = changes
    logger.info(
        "keras_estimator installed: tf.estimator, tf.compat.v1.estimator, "
        "tf.compat.v1.layers and the tf.compat.v1.train hooks now resolve to "
        "keras_estimator."
    )
    return Installation(tuple(c.label for c in changes), True)


def uninstall() -> None:
    """Undoes `install()`, restoring every patched name; a no-op otherwise.

    Objects a program obtained while installed (an `Estimator`, a module
    bound by `from tensorflow import estimator`) stay what they are.
    """
    global _changes
    with _lock:
        if _changes is None:
            return
        _restore(_changes)
        _changes = None


# ---------------------------------------------------------------- what to patch


def _wanted_patches() -> list[tuple[Any, str, Any]]:
    """(owner or None for sys.modules, name, new value), without duplicates."""
    import keras_estimator
    from keras_estimator import compat

    v1_estimator = compat.estimator
    patches: list[tuple[Any, str, Any]] = []
    v1_namespaces, v2_namespaces = api_modules.namespaces()
    for namespace in v2_namespaces:
        patches.append((namespace, "estimator", keras_estimator))
    for namespace in v1_namespaces:
        patches.append((namespace, "estimator", v1_estimator))
        patches.append((namespace, "layers", compat.layers))
    switches = {name: _graph_mode.keep_eager_on(name) for name in _graph_mode.SWITCHES}
    for namespace in v1_namespaces:
        patches.extend((namespace, name, switch) for name, switch in switches.items())
    train_names = public_names.entries_in(public_names.V1_TRAIN)
    for train in _unique(namespace.train for namespace in v1_namespaces):
        patches.extend((train, row.name, row.resolve()) for row in train_names)
    patches.extend((None, name, module) for name, module in _module_entries().items())
    tf_keras = api_modules.tf_keras_module()
    if tf_keras is not None:
        patches.append((tf_keras, "estimator", compat.keras_estimator))
        patches.extend(_dense_features_patches(tf_keras))
        patches.extend(_legacy_optimizer_patches(tf_keras))
        patches.extend(_loss_alias_patches(tf_keras))
        patches.extend(_random_test_tool_patches(tf_keras))
    return patches


def _random_test_tool_patches(tf_keras: Any) -> list[tuple[Any, str, Any]]:
    """`tf.compat.v1.keras.utils.DeterministicRandomTestTool`, where Keras has none.

    TensorFlow's migration guides run a TF1 model_fn under it. Keras 3.15's
    `tf.keras.utils` is also `tf.compat.v1.keras.utils`.
    """
    utils = getattr(tf_keras, "utils", None)
    if utils is None or hasattr(utils, "DeterministicRandomTestTool"):
        return []
    from keras_estimator._src.zero_change.deterministic_random import (
        DeterministicRandomTestTool,
    )

    return [(utils, "DeterministicRandomTestTool", DeterministicRandomTestTool)]


# Lowercase loss functions tf.losses / tf.keras.losses had in 2.15 under
# their long names; Keras 3's tf.keras.losses keeps only the short aliases
# (mse, mae, ...), its keras.losses the long names.
LOSS_FUNCTION_NAMES = (
    "kl_divergence",
    "log_cosh",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_error",
    "mean_squared_logarithmic_error",
)


def _loss_alias_patches(tf_keras: Any) -> list[tuple[Any, str, Any]]:
    """`tf.losses.mean_squared_error` and the other long names 2.15 had.

    `tf.losses` and `tf.keras.losses` are one module object (Keras 3.15); a
    name it already has is left alone.
    """
    losses = getattr(tf_keras, "losses", None)
    if losses is None:
        return []
    import keras

    return [
        (losses, name, getattr(keras.losses, name))
        for name in LOSS_FUNCTION_NAMES
        if not hasattr(losses, name) and hasattr(keras.losses, name)
    ]


def _legacy_optimizer_patches(tf_keras: Any) -> list[tuple[Any, str, Any]]:
    """`tf.keras.optimizers.legacy.*`, only where Keras has no working ones.

    Keras 3's names there raise ImportError when called; a Keras 2 keeps its
    own optimizers.
    """
    legacy = getattr(getattr(tf_keras, "optimizers", None), "legacy", None)
    if legacy is None or hasattr(getattr(legacy, "Adam", None), "get_updates"):
        return []
    return [(legacy, name, value) for name, value in LEGACY_NAMES.items()]


def _dense_features_patches(tf_keras: Any) -> list[tuple[Any, str, Any]]:
    """`tf.keras.layers.DenseFeatures`, only where Keras has none of its own.

    `tf.keras.layers` and `tf.compat.v1.keras.layers` are one module object
    (Keras 3.15), so one attribute serves both.
    """
    layers = getattr(tf_keras, "layers", None)
    if layers is None or hasattr(layers, "DenseFeatures"):
        return []
    return [(layers, "DenseFeatures", DenseFeatures)]


def _module_entries() -> dict[str, types.ModuleType]:
    """sys.modules entries that make `import tensorflow.estimator` work."""
    import keras_estimator
    from keras_estimator import compat

    served = {
        "tensorflow.estimator": keras_estimator,
        "tensorflow.compat.v2.estimator": keras_estimator,
        "tensorflow.compat.v1.estimator": compat.estimator,
    }
    entries: dict[str, types.ModuleType] = {}
    for prefix, module in served.items():
        entries[prefix] = module
        for name, submodule in public_names.submodules_of(module.__name__).items():
            entries[f"{prefix}.{name}"] = importlib.import_module(submodule)
    entries["tensorflow.compat.v1.layers"] = compat.layers
    if "tensorflow_estimator" not in sys.modules:
        entries.update(_tensorflow_estimator_stand_in())
    return entries


def _tensorflow_estimator_stand_in() -> dict[str, types.ModuleType]:
    """A `tensorflow_estimator` package exposing what its top level exposed.

    tensorflow_estimator 2.15's top-level `estimator` was the v1 API; its
    private `tensorflow_estimator.python.estimator.*` modules have no
    stand-in.
    """
    from keras_estimator import compat

    package = types.ModuleType(
        "tensorflow_estimator",
        "Stand-in for tensorflow_estimator, installed by keras_estimator.install().",
    )
    package.__path__ = []  # A package, so `tensorflow_estimator.estimator` imports.
    package.estimator = compat.estimator  # type: ignore[attr-defined]
    return {
        "tensorflow_estimator": package,
        "tensorflow_estimator.estimator": compat.estimator,
    }


def _unique(objects: Iterator[Any] | list[Any]) -> list[Any]:
    seen: set[int] = set()
    kept = []
    for obj in objects:
        if id(obj) not in seen:
            seen.add(id(obj))
            kept.append(obj)
    return kept


# ---------------------------------------------------------------- patching


def _current(owner: Any, name: str) -> Any:
    if owner is None:
        return sys.modules.get(name, _MISSING)
    # The module's own dict, not getattr: a lazily loaded name that was never
    # loaded counts as missing, so restoring it leaves it lazy again.
    return vars(owner).get(name, _MISSING)


def _assign(owner: Any, name: str, value: Any) -> None:
    if owner is None:
        sys.modules[name] = value
    else:
        setattr(owner, name, value)


def _restore(changes: list[_Change]) -> None:
    for change in reversed(changes):
        if change.owner is None:
            if change.old is _MISSING:
                sys.modules.pop(change.name, None)
            else:
                sys.modules[change.name] = change.old
        elif change.old is not _MISSING:
            setattr(change.owner, change.name, change.old)
        elif change.name in vars(change.owner):
            delattr(change.owner, change.name)
