"""Refuses to load on a Keras backend other than TensorFlow."""

from __future__ import annotations

import json
import os


def configured_backend() -> str:
    """The backend Keras will load, read as Keras reads it, without importing it.

    `KERAS_BACKEND` wins; otherwise the `"backend"` of `keras.json` in
    `$KERAS_HOME`, or in `~/.keras` (`/tmp/.keras` where the home directory is
    not writable, as Keras falls back); otherwise Keras' default, tensorflow.
    """
    backend = os.environ.get("KERAS_BACKEND")
    if backend:
        return backend
    if "KERAS_HOME" in os.environ:
        homes = [os.environ["KERAS_HOME"]]
    else:
        home = os.path.expanduser("~")
        base = home if os.access(home, os.W_OK) else "/tmp"
        homes = [os.path.join(base, ".keras")]
    for keras_home in homes:
        try:
            with open(os.path.join(keras_home, "keras.json")) as handle:
                config = json.load(handle)
        except (OSError, ValueError):
            continue
        if isinstance(config, dict) and isinstance(config.get("backend"), str):
            return str(config["backend"])
    return "tensorflow"


def require_tensorflow_backend() -> None:
    """Raises ImportError with the fix when Keras would run on another backend.

    Called when the package is imported, before anything imports Keras, so the
    message comes before any backend-specific failure (a missing jax, say).
    """
    backend = configured_backend()
    if backend != "tensorflow":
        raise ImportError(
            f"keras_estimator runs on Keras' TensorFlow backend, but "
            f"KERAS_BACKEND is {backend!r}. Set KERAS_BACKEND=tensorflow in the "
            "environment before importing keras or keras_estimator, e.g. "
            "`export KERAS_BACKEND=tensorflow`."
        )
