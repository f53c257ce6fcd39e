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


def is_api_module(name: str) -> bool:
    """Whether `sys.modules[name]` is a public TensorFlow namespace (`tf` or a generated one)."""
    return name == "tensorflow" or name.startswith("tensorflow._api.")


def tf_keras_module() -> Any:
    """The module `tf.keras` (and `tf.compat.v1.keras`) load, or None if Keras has none.

    TensorFlow reaches it through lazy loaders that look names up in it, so
    an attribute set there is seen through every loader.
    """
    try:
        return importlib.import_module("keras._tf_keras.keras")
    except ImportError:
        return None
