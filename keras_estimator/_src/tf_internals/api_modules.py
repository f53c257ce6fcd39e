"""The private modules behind TensorFlow's public namespaces and `tf.keras`.

Checked on TensorFlow 2.21 and Keras 3.15. TensorFlow generates each public
namespace as a module under `tensorflow._api.v2` (`tf.compat.v1` is served
by `tensorflow._api.v2.compat.v1`, which has `compat.v1` / `compat.v2`
modules of its own), and `tf.keras` / `tf.compat.v1.keras` load
`keras._tf_keras.keras` through lazy loaders that look names up in it. A
public name replaced for programs (zero-change mode, `tf.group` in a
model_fn) has to be replaced in each of these module objects, since a
program may reach any of them.

Private symbols touched: the modules `tensorflow._api.v2.compat.v1`,
`tensorflow._api.v2.compat.v2` (and the `tensorflow._api.` prefix of every
generated namespace module), and `keras._tf_keras.keras`.
"""

from __future__ import annotations

import importlib
from typing import Any

TOUCHES = (
    "tensorflow._api.v2.compat.v1:compat.v1",
    "tensorflow._api.v2.compat.v1:compat.v2",
    "tensorflow._api.v2.compat.v1:train",
    "tensorflow._api.v2.compat.v1:group",
    "tensorflow._api.v2.compat.v2:compat.v1",
    "tensorflow._api.v2.compat.v2:compat.v2",
    "tensorflow._api.v2.compat.v2:group",
    "keras._tf_keras.keras:layers",
)

# The generated modules of `tf.compat.v1` and `tf.compat.v2`, each of which a
# program may reach as a module object of its own.
NAMESPACE_MODULES = ("tensorflow._api.v2.compat.v1", "tensorflow._api.v2.compat.v2")
# Module names that may hold a TF API namespace (`import tensorflow.compat.v1`
# binds a module object of its own), imported first by `namespaces()` so that
# each module object a program may later reach is there.
_NAMESPACE_NAMES = ("tensorflow.compat.v1", "tensorflow.compat.v2", *NAMESPACE_MODULES)


def is_api_module(name: str) -> bool:
    """Whether `sys.modules[name]` is a public TensorFlow namespace (`tf` or a generated one)."""
    return name == "tensorflow" or name.startswith("tensorflow._api.")


def namespaces() -> tuple[list[Any], list[Any]]:
    """The module objects that serve `tf.compat.v1` names, and those that serve `tf` (v2) names.

    Each distinct object once: `tf`, `tf.compat.v1`, `tf.compat.v2`, the
    modules `import tensorflow.compat.v1` / `.v2` bind, the generated ones,
    and each one's own `compat.v1` / `compat.v2`.
    """
    import sys

    import tensorflow as tf

    for name in _NAMESPACE_NAMES:
        importlib.import_module(name)
    roots = [tf, tf.compat.v1, tf.compat.v2]
    roots += [sys.modules[name] for name in _NAMESPACE_NAMES]
    found = list(roots)
    for root in roots:
        found += [root.compat.v1, root.compat.v2]
    found = list({id(module): module for module in found}.values())
    v1 = [module for module in found if module.__name__.endswith("compat.v1")]
    v2 = [module for module in found if not module.__name__.endswith("compat.v1")]
    return v1, v2


def tf_keras_module() -> Any:
    """The module `tf.keras` (and `tf.compat.v1.keras`) load, or None if Keras has none.

    TensorFlow reaches it through lazy loaders that look names up in it, so
    an attribute set there is seen through every loader.
    """
    try:
        return importlib.import_module("keras._tf_keras.keras")
    except ImportError:
        return None
