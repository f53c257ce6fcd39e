"""`BestExporter`: exports when an evaluation beats the best one so far.

Owns BestExporter, its default comparison (`_loss_smaller`) and the reading
of eval results from event files, from which it recovers the best result of
earlier runs on the same model_dir.

Differences from tf.estimator 2.15:

* Both TF1 (`simple_value`) and TF2 (scalar tensor) summaries are read, and
  the metrics of one evaluation are grouped by global step (TF2 writes one
  event per metric), so the previous best is really recovered.
* With the default `event_file_pattern`, a BestExporter used by
  `train_and_evaluate` with a named evaluation (`EvalSpec(name="x")`) reads
  `eval_x/`, where that evaluation writes its summaries (2.15 read `eval/`
  only, and so found nothing).
* After a restart, 2.15 exported on the first evaluation whatever its
  result. Here the first evaluation is compared with the best recovered
  from the event files (its own event left out), and exports only if
  better, or if the export directory holds no export yet.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from keras_estimator._src.base import fn_args as _fn_args
from keras_estimator._src.checkpoint import eval_events
from keras_estimator._src.export.exporters import (
    _SavedModelExporter,
    check_exports_to_keep,
    export_versions,
    garbage_collect_exports,
)

logger = logging.getLogger("keras_estimator")

_DEFAULT_EVENT_FILE_PATTERN = "eval/*.tfevents.*"
_LOSS_KEY = "loss"
_COMPARE_FN_ARGS = ("best_eval_result", "current_eval_result")


def _check_compare_fn(compare_fn: Any) -> Callable[..., bool]:
    if compare_fn is None:
        raise ValueError(
            "`compare_fn` must not be None: pass a function "
            "compare_fn(best_eval_result, current_eval_result) returning True "
            "when the current result is better."
        )
    if not callable(compare_fn):
        raise TypeError(f"`compare_fn` must be callable, got {compare_fn!r}.")
    args = set(_fn_args.fn_args(compare_fn))
    missing = [name for name in _COMPARE_FN_ARGS if name not in args]
    extra = sorted(args - set(_COMPARE_FN_ARGS))
    if missing or extra:
        raise ValueError(
            f"compare_fn ({compare_fn!r}) must take exactly the arguments "
            f"{list(_COMPARE_FN_ARGS)}; it lacks {missing} and has unexpected "
            f"{extra}."
        )
    return compare_fn  # type: ignore[no-any-return]


def _loss_smaller(
    best_eval_result: dict[str, Any], current_eval_result: dict[str, Any]
) -> bool:
    """True if `current_eval_result` has a smaller `loss` than `best_eval_result`.

    Raises:
        ValueError: either result is empty or has no `loss`.
    """
    for label, result in (
        ("best_eval_result", best_eval_result),
        ("current_eval_result", current_eval_result),
    ):
        if not result or _LOSS_KEY not in result:
            raise ValueError(
                f"{label} cannot be empty or no loss is found in it (got "
                f"{result!r}). Pass a compare_fn that uses the metrics your "
                "evaluation returns."
            )
    return bool(best_eval_result[_LOSS_KEY] > current_eval_result[_LOSS_KEY])


class BestExporter(_SavedModelExporter):
    """Exports when an evaluation beats the best one so far.

    The best so far is remembered across restarts: on its first export for
    a model_dir the exporter reads the eval metrics stored in the event
    files matching `event_file_pattern` (relative to model_dir) and takes the
    best of them by `compare_fn`. With the default pattern and a named
    evaluation (`EvalSpec(name="x")`), `train_and_evaluate` points it at
    `eval_x/` (see `set_evaluation_name`).

    Args:
        name: the export subdirectory (`model_dir/export/<name>`).
        serving_input_receiver_fn: returns the `ServingInputReceiver`
            (required to export; None fails at the first export).
        event_file_pattern: glob of eval event files, relative to model_dir;
            None forgets earlier runs.
        compare_fn: `compare_fn(best_eval_result, current_eval_result)` ->
            True when the current result is better. Default: smaller `loss`.
        assets_extra: destination path -> source file, for `assets.extra/`.
        as_text: write the SavedModel proto as text.
        exports_to_keep: how many exports to keep; None keeps all.

    Raises:
        TypeError / ValueError: an argument has the wrong type or value
            (`compare_fn` must take exactly `best_eval_result` and
            `current_eval_result`).

    Example:
        >>> exporter = BestExporter(serving_input_receiver_fn=serving_fn)  # doctest: +SKIP
    """

    def __init__(
        self,
        name: str = "best_exporter",
        serving_input_receiver_fn: Callable[[], Any] | None = None,
        event_file_pattern: str | None = _DEFAULT_EVENT_FILE_PATTERN,
        compare_fn: Callable[..., bool] = _loss_smaller,
        assets_extra: dict[str, str] | None = None,
        as_text: bool = False,
        exports_to_keep: int | None = 5,
    ) -> None:
        super().__init__(
            name,
            serving_input_receiver_fn,
            assets_extra,
            as_text,
            allow_no_serving_fn=True,
        )
        self._compare_fn = _check_compare_fn(compare_fn)
        if event_file_pattern is not None and not isinstance(event_file_pattern, str):
            raise TypeError(
                f"event_file_pattern must be a glob relative to model_dir (str) or "
                f"None, got {event_file_pattern!r}."
            )
        self._event_file_pattern = event_file_pattern
        self._exports_to_keep = check_exports_to_keep(
            exports_to_keep, first_phrase="must be positive number, got"
        )
        self._evaluation_name: str | None = None
        self._loaded_model_dir: str | None = None
        self._best_eval_result: dict[str, Any] | None = None
        self._has_export = False

    def set_evaluation_name(self, name: str | None) -> None:
        """Says which evaluation's results this exporter compares.

        `train_and_evaluate` calls it with `EvalSpec.name`. With the default
        `event_file_pattern`, the previous best is then read from
        `eval_<name>/` for a named evaluation (`eval/` otherwise). A change
        of name makes the next export read the event files again.
        """
        if name != self._evaluation_name:
            self._evaluation_name = name
            self._loaded_model_dir = None

    def event_files_glob(self, model_dir: str) -> str | None:
        """The absolute glob of the event files the previous best is read from."""
        pattern = self._event_file_pattern
        if pattern is None:
            return None
        if pattern == _DEFAULT_EVENT_FILE_PATTERN and self._evaluation_name:
            pattern = f"eval_{self._evaluation_name}/*.tfevents.*"
        return os.path.join(model_dir, pattern)

    def export(
        self,
        estimator: Any,
        export_path: str,
        checkpoint_path: str | None,
        eval_result: dict[str, Any] | None,
        is_the_final_export: bool,
    ) -> Any:
        model_dir = os.fspath(estimator.model_dir)
        if self._loaded_model_dir != model_dir:
            self._recover_best(model_dir, export_path, eval_result)
        if not self._is_better(eval_result):
            return None
        logger.info("Performing best model export.")
        result = self._write(estimator, export_path, checkpoint_path)
        self._best_eval_result = eval_result
        self._has_export = True
        garbage_collect_exports(export_path, self._exports_to_keep)
        return result

    def _is_better(self, eval_result: dict[str, Any] | None) -> bool:
        if self._best_eval_result is None or not self._has_export:
            return True
        return bool(
            self._compare_fn(
                best_eval_result=self._best_eval_result,
                current_eval_result=eval_result,
            )
        )

    def _recover_best(
        self, model_dir: str, export_path: str, eval_result: dict[str, Any] | None
    ) -> None:
        """Reads the best earlier result of this model_dir from its event files.

        The evaluation being exported has already written its own event;
        it is left out (by global step) so that it is compared, not found.
        """
        self._loaded_model_dir = model_dir
        self._has_export = bool(export_versions(export_path))
        self._best_eval_result = None
        pattern = self.event_files_glob(model_dir)
        if pattern is None:
            return
        logger.info("Loading best metric from event files %s.", pattern)
        current_step = (eval_result or {}).get("global_step")
        for step, metrics in eval_events.read_scalars(pattern).items():
            if step == current_step:
                continue
            candidate = {**metrics, "global_step": step}
            # Comparing a first candidate with itself checks that it holds
            # what compare_fn needs.
            best = self._best_eval_result or candidate
            try:
                better = self._compare_fn(
                    best_eval_result=best, current_eval_result=candidate
                )
            except (KeyError, ValueError) as error:
                # An event without the compared metric (written by other
                # code into the eval dir) is not an evaluation to rank.
                logger.warning(
                    "BestExporter: skipping eval results at step %d of %s: %s",
                    step,
                    pattern,
                    error,
                )
                continue
            if better or self._best_eval_result is None:
                self._best_eval_result = candidate
