"""Refuses to load on a Keras backend other than TensorFlow."""

from __future__ import annotations

import os


def require_tensorflow_backend() -> None:
    """Raises ImportError with the fix when Keras runs on another backend.

    The check reads `KERAS_BACKEND` before importing Keras, so the message
    comes before any backend-specific failure.
    """
    backend = os.environ.get("KERAS_BACKEND")
    if backend is None:
        import keras

        backend = keras.backend.backend()
    if backend != "tensorflow":
        raise ImportError(
            f"keras_estimator runs on Keras' TensorFlow backend, but "
            f"KERAS_BACKEND is {backend!r}. Set KERAS_BACKEND=tensorflow in the "
            "environment before importing keras or keras_estimator, e.g. "
            "`export KERAS_BACKEND=tensorflow`."
        )
