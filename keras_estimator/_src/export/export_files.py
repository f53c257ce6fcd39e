"""The files of an export: where it goes, and what is fixed after saving.

* Exports go to `<export_dir_base>/<timestamp>` (seconds since the epoch,
  bumped while taken), the layout TensorFlow Serving watches. They are
  written under `temp-<timestamp>`, which Serving ignores, and renamed when
  complete, so a half-written export never appears.
* After `tf.saved_model.save`, signature method names are set (it writes
  every signature as predict), and `as_text` rewrites the proto as
  `saved_model.pbtxt`.
* `assets_extra` files are copied under `assets.extra/`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import tensorflow as tf

from keras_estimator._src.base.export_outputs import describe
from keras_estimator._src.tf_internals import saved_model_files

ASSETS_EXTRA_DIR = "assets.extra"
_MAX_ATTEMPTS = 10


def as_path(value: Any, name: str = "export_dir_base") -> str:
    """`value` (str, bytes or os.PathLike) as a str path; `name` says whose."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.fsdecode(os.fspath(value))
    raise TypeError(
        f"{name} must be a path (str, bytes or os.PathLike); got "
        f"{describe(value)}."
    )


def check_assets_extra(assets_extra: Any) -> dict[str, str]:
    """Validates `assets_extra` (destination -> source file); returns a copy.

    Raises:
        TypeError: not a dict of path strings.
        ValueError: a destination leaves `assets.extra/`, or a source is missing.
    """
    if assets_extra is None:
        return {}
    if not isinstance(assets_extra, Mapping):
        raise TypeError(
            "assets_extra must be a dict of destination path (relative to "
            f"assets.extra/) -> source file; got {describe(assets_extra)}."
        )
    checked = {}
    for destination, source in assets_extra.items():
        destination = as_path(destination, "an assets_extra destination")
        source = as_path(source, f"assets_extra[{destination!r}]")
        parts = destination.replace("\\", "/").split("/")
        if os.path.isabs(destination) or ".." in parts or not destination:
            raise ValueError(
                f"assets_extra destination {destination!r} must be a relative path "
                "inside assets.extra/, e.g. 'vocab/labels.txt'."
            )
        if not tf.io.gfile.exists(source):
            raise ValueError(
                f"assets_extra[{destination!r}] source file {source!r} does not exist."
            )
        checked[destination] = source
    return checked


def write_atomically(base: str, write: Callable[[str], None]) -> str:
    """Runs `write(temp_dir)` then renames it to `<base>/<timestamp>`.

    Returns:
        The final export directory.
    """
    tf.io.gfile.makedirs(base)
    timestamp = int(time.time())
    while tf.io.gfile.exists(_timestamped(base, timestamp)) or tf.io.gfile.exists(
        _temporary(base, timestamp)
    ):
        timestamp += 1
    temporary = _temporary(base, timestamp)
    try:
        write(temporary)
        return _publish(temporary, base, timestamp)
    except BaseException:
        if tf.io.gfile.exists(temporary):
            tf.io.gfile.rmtree(temporary)
        raise


def _timestamped(base: str, timestamp: int) -> str:
    return os.path.join(base, str(timestamp))


def _temporary(base: str, timestamp: int) -> str:
    return os.path.join(base, f"temp-{timestamp}")


def _publish(temporary: str, base: str, timestamp: int) -> str:
    # Another exporter may have taken the name meanwhile: take the next one.
    for _ in range(_MAX_ATTEMPTS):
        final = _timestamped(base, timestamp)
        if not tf.io.gfile.exists(final):
            try:
                tf.io.gfile.rename(temporary, final, overwrite=False)
                return final
            except tf.errors.AlreadyExistsError:
                pass
        timestamp += 1
    raise RuntimeError(
        f"Could not find a free export directory name in {base} after "
        f"{_MAX_ATTEMPTS} attempts."
    )


def finish_saved_model(
    export_dir: str,
    method_names: Mapping[str, str],
    as_text: bool,
    input_keys: Mapping[str, Mapping[str, str]] | None = None,
) -> None:
    """Sets signature input keys and method names, then writes the text format if asked.

    `input_keys` gives, per signature, the receiver key of each input saved
    under another name (a key that is no Python name).
    """
    if input_keys:
        saved_model_files.rename_signature_inputs(export_dir, input_keys)
    changed = {
        name: method
        for name, method in method_names.items()
        if method != tf.saved_model.PREDICT_METHOD_NAME
    }
    if changed:
        updater = tf.compat.v1.saved_model.signature_def_utils.MethodNameUpdater(
            export_dir
        )
        for name, method in sorted(changed.items()):
            updater.replace_method_name(name, method, tags=tf.saved_model.SERVING)
        updater.save()
    if changed or input_keys:
        # The fingerprint describes saved_model.pb, which just changed.
        saved_model_files.refresh_saved_model_fingerprint(export_dir)
    if as_text:
        saved_model_files.rewrite_saved_model_as_text(export_dir)


def copy_assets_extra(export_dir: str, assets_extra: Mapping[str, str]) -> None:
    """Copies each source file to `assets.extra/<destination>`."""
    for destination, source in assets_extra.items():
        target = os.path.join(export_dir, ASSETS_EXTRA_DIR, destination)
        tf.io.gfile.makedirs(os.path.dirname(target))
        tf.io.gfile.copy(source, target, overwrite=True)
