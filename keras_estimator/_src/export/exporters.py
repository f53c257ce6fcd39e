"""Exporters: the SavedModels `train_and_evaluate` writes after evaluations.

Owns the exporter contract (the `Exporter` base class and the structural
`ExporterProtocol`), `LatestExporter` and `FinalExporter`, the base they
share with `BestExporter` (in `best_exporter`), and the garbage collection
of exports.

Every exporter writes under its own directory, `model_dir/export/<name>/`,
one timestamped subdirectory per export (`export/<name>/1700000000/`), by
calling `estimator.export_saved_model(export_dir_base,
serving_input_receiver_fn, assets_extra=..., as_text=...,
checkpoint_path=...)`, which returns the new directory as bytes.
`exports_to_keep` deletes the oldest such subdirectories (those whose name
is a 10-digit timestamp; nothing else in the directory is touched).

Unlike tf.estimator 2.15, constructor arguments are checked when the
exporter is built, and an exporter given an estimator without
`export_saved_model` says so.
"""

from __future__ import annotations

import abc
import logging
import os
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np
import tensorflow as tf

logger = logging.getLogger("keras_estimator")

_EXPORT_VERSION_DIGITS = 10  # seconds since the epoch, as export dirs are named


# ---- the contract ----------------------------------------------------------------


@runtime_checkable
class ExporterProtocol(Protocol):
    """What `EvalSpec(exporters=...)` needs of an exporter.

    `Exporter` subclasses satisfy it; so does any object with a string `name`
    and this `export` method.
    """

    @property
    def name(self) -> str:
        """The export subdirectory under `model_dir/export/`."""
        ...

    def export(
        self,
        estimator: Any,
        export_path: str,
        checkpoint_path: str | None,
        eval_result: dict[str, Any] | None,
        is_the_final_export: bool,
    ) -> Any:
        """Exports `estimator` at `checkpoint_path`; returns the export path or None."""
        ...


class Exporter(abc.ABC):
    """Base class of exporters: a `name` and an `export` method.

    `train_and_evaluate` calls `export` after each evaluation with the
    checkpoint just evaluated and its metrics.
    """

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The directory under `model_dir/export/` this exporter writes to.

        Must be a non-empty string, unique among an EvalSpec's exporters.
        """

    @abc.abstractmethod
    def export(
        self,
        estimator: Any,
        export_path: str,
        checkpoint_path: str | None,
        eval_result: dict[str, Any] | None,
        is_the_final_export: bool,
    ) -> Any:
        """Exports the model, or decides not to.

        Called by `train_and_evaluate` after each evaluation.

        Args:
            estimator: the Estimator being trained.
            export_path: the directory for this exporter's exports
                (`model_dir/export/<name>`); each export goes into a
                timestamped subdirectory of it.
            checkpoint_path: the checkpoint that was evaluated.
            eval_result: what `Estimator.evaluate` returned for it.
            is_the_final_export: True only for the evaluation at the end of
                training.

        Returns:
            The export directory (bytes or str), or None if nothing was
            exported.
        """


# ---- argument checks -------------------------------------------------------------


def _check_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(
            f"An exporter name must be a string, got {name!r} "
            f"({type(name).__name__}). It names the export subdirectory, e.g. "
            "name='latest'."
        )
    if not name:
        raise ValueError(
            "An exporter name cannot be empty: it names the export subdirectory "
            "under model_dir/export/. Pass e.g. name='latest'."
        )
    return name


def _check_serving_fn(fn: Any, allow_none: bool = False) -> Any:
    if fn is None and allow_none:
        return None
    if not callable(fn):
        raise TypeError(
            f"serving_input_receiver_fn must be a function of no arguments "
            f"returning a ServingInputReceiver, got {fn!r}. Build one with e.g. "
            "keras_estimator.export.build_raw_serving_input_receiver_fn(features)."
        )
    return fn


def _check_assets_extra(assets_extra: Any) -> dict[str, str] | None:
    if assets_extra is not None and not isinstance(assets_extra, dict):
        raise TypeError(
            f"assets_extra must be None or a dict of destination path (relative "
            f"to assets.extra/) to source file, got {assets_extra!r}."
        )
    return assets_extra


def check_exports_to_keep(
    exports_to_keep: Any, first_phrase: str = "must be a positive number. Got"
) -> int | None:
    """`exports_to_keep` as an int, or None; the error starts with 2.15's phrase.

    2.15's LatestExporter said "must be a positive number. Got <n>", its
    BestExporter "must be positive number".
    """
    if exports_to_keep is None:
        return None
    if (
        isinstance(exports_to_keep, bool)
        or not isinstance(exports_to_keep, (int, np.integer))
        or exports_to_keep <= 0
    ):
        raise ValueError(
            f"`exports_to_keep`, if provided, {first_phrase} "
            f"{exports_to_keep!r}: pass a positive int, or None to keep every "
            "export."
        )
    return int(exports_to_keep)


# ---- the shared base: settings and the call to export_saved_model ---------------------


class _SavedModelExporter(Exporter):
    """An exporter that writes SavedModels with `estimator.export_saved_model`."""

    def __init__(
        self,
        name: str,
        serving_input_receiver_fn: Callable[[], Any] | None,
        assets_extra: dict[str, str] | None,
        as_text: bool,
        *,
        allow_no_serving_fn: bool = False,
    ) -> None:
        self._name = _check_name(name)
        self._serving_input_receiver_fn = _check_serving_fn(
            serving_input_receiver_fn, allow_none=allow_no_serving_fn
        )
        self._assets_extra = _check_assets_extra(assets_extra)
        self._as_text = bool(as_text)

    @property
    def name(self) -> str:
        return self._name

    def _write(self, estimator: Any, export_path: str, checkpoint_path: str | None) -> Any:
        if self._serving_input_receiver_fn is None:
            raise ValueError(
                f"Exporter {self._name!r} has no serving_input_receiver_fn: pass "
                "one when building it, e.g. BestExporter(serving_input_receiver_fn=...)."
            )
        export_saved_model = getattr(estimator, "export_saved_model", None)
        if not callable(export_saved_model):
            raise TypeError(
                f"Exporter {self._name!r} cannot export a {type(estimator).__name__}: "
                "it has no export_saved_model() method."
            )
        return export_saved_model(
            export_path,
            self._serving_input_receiver_fn,
            assets_extra=self._assets_extra,
            as_text=self._as_text,
            checkpoint_path=checkpoint_path,
        )


# ---- garbage collection ----------------------------------------------------------------


def export_versions(export_dir_base: str) -> list[tuple[int, str]]:
    """The timestamped exports under `export_dir_base`, oldest first.

    Only subdirectories named by a 10-digit timestamp count: temporary
    directories and anything else a user put there are left alone.

    Returns:
        `(timestamp, path)` pairs sorted by timestamp.
    """
    if not tf.io.gfile.isdir(export_dir_base):
        return []
    versions = []
    for entry in tf.io.gfile.listdir(export_dir_base):
        name = entry.rstrip("/")
        if len(name) == _EXPORT_VERSION_DIGITS and name.isdigit():
            path = os.path.join(export_dir_base, name)
            if tf.io.gfile.isdir(path):
                versions.append((int(name), path))
    return sorted(versions)


def garbage_collect_exports(export_dir_base: str, exports_to_keep: int | None) -> list[str]:
    """Deletes all but the newest `exports_to_keep` exports in `export_dir_base`.

    Args:
        export_dir_base: an exporter's directory (`model_dir/export/<name>`).
        exports_to_keep: how many timestamped exports to keep; None keeps all.

    Returns:
        The paths deleted.
    """
    if exports_to_keep is None:
        return []
    versions = export_versions(export_dir_base)
    doomed = [path for _, path in versions[: max(len(versions) - exports_to_keep, 0)]]
    deleted = []
    for path in doomed:
        try:
            tf.io.gfile.rmtree(path)
        except tf.errors.NotFoundError as error:
            # Another process (a second trainer on a shared disk) got there first.
            logger.warning("Can not delete %s recursively: %s", path, error)
            continue
        deleted.append(path)
    return deleted




# ---- LatestExporter and FinalExporter ------------------------------------------------


class LatestExporter(_SavedModelExporter):
    """Exports after every evaluation, keeping the newest `exports_to_keep`.

    Args:
        name: the export subdirectory (`model_dir/export/<name>`).
        serving_input_receiver_fn: returns the `ServingInputReceiver` of the
            exported serving signature.
        assets_extra: destination path (under `assets.extra/`) -> source file,
            copied into each export.
        as_text: write the SavedModel proto as text.
        exports_to_keep: how many exports to keep (oldest deleted first);
            None keeps all.

    Raises:
        TypeError / ValueError: an argument has the wrong type or value.

    Example:
        >>> exporter = LatestExporter("latest", serving_input_receiver_fn)  # doctest: +SKIP
        >>> eval_spec = EvalSpec(eval_input_fn, exporters=exporter)  # doctest: +SKIP
    """

    def __init__(
        self,
        name: str,
        serving_input_receiver_fn: Callable[[], Any],
        assets_extra: dict[str, str] | None = None,
        as_text: bool = False,
        exports_to_keep: int | None = 5,
    ) -> None:
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        self._exports_to_keep = check_exports_to_keep(exports_to_keep)

    def export(
        self,
        estimator: Any,
        export_path: str,
        checkpoint_path: str | None,
        eval_result: dict[str, Any] | None,
        is_the_final_export: bool,
    ) -> Any:
        result = self._write(estimator, export_path, checkpoint_path)
        garbage_collect_exports(export_path, self._exports_to_keep)
        return result


class FinalExporter(_SavedModelExporter):
    """Exports once, after the evaluation at the end of training.

    Args:
        name: the export subdirectory (`model_dir/export/<name>`).
        serving_input_receiver_fn: returns the `ServingInputReceiver`.
        assets_extra: destination path -> source file, for `assets.extra/`.
        as_text: write the SavedModel proto as text.

    Example:
        >>> exporter = FinalExporter("final", serving_input_receiver_fn)  # doctest: +SKIP
    """

    def __init__(
        self,
        name: str,
        serving_input_receiver_fn: Callable[[], Any],
        assets_extra: dict[str, str] | None = None,
        as_text: bool = False,
    ) -> None:
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)

    def export(
        self,
        estimator: Any,
        export_path: str,
        checkpoint_path: str | None,
        eval_result: dict[str, Any] | None,
        is_the_final_export: bool,
    ) -> Any:
        if not is_the_final_export:
            return None
        logger.info("Performing the final export in the end of training.")
        return self._write(estimator, export_path, checkpoint_path)
