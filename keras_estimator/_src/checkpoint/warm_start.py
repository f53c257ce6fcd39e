"""Warm starting: a new model's first values taken from another checkpoint.

This module owns `WarmStartSettings` and `VocabInfo` (tf.estimator 2.15's
namedtuples, with their fields checked on construction) and `warm_start`,
which the Estimator calls when training starts with no checkpoint in its
model_dir. `warm_start` picks variables of the variable store as tf.estimator
did (one regex: trainable variables; a list of regexes: all checkpointed
variables, optimizer slots and the global step included), reads each one's
value from the checkpoint under its own name or the one
`var_name_to_prev_var_name` gives, and remaps rows (or columns) by token where
a `VocabInfo` says the vocabulary changed. Everything is read and checked
before any variable is assigned, so a bad setting changes nothing.
"""

from __future__ import annotations

import collections
import difflib
import logging
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from keras_estimator._src.checkpoint import object_checkpoint
from keras_estimator._src.checkpoint.vocab_remap import remap_by_vocab
from keras_estimator._src.engine.variable_store import as_tf_variable

logger = logging.getLogger("keras_estimator")


class VocabInfo(
    collections.namedtuple(
        "VocabInfo",
        [
            "new_vocab",
            "new_vocab_size",
            "num_oov_buckets",
            "old_vocab",
            "old_vocab_size",
            "backup_initializer",
            "axis",
        ],
    )
):
    """How a variable's rows (or columns) map between two vocabularies.

    Row `i` of the new variable (column `i` with `axis=1`) belongs to line `i`
    of `new_vocab`; it takes the checkpoint's row of the same token in
    `old_vocab`. Tokens absent from the old vocabulary and the
    `num_oov_buckets` rows after the vocabulary get `backup_initializer`'s
    values (zeros when it is None).

    Args:
        new_vocab: path of the vocabulary file the new model uses, one token
            per line.
        new_vocab_size: how many of its first tokens the new variable has rows
            for.
        num_oov_buckets: out-of-vocabulary rows following them.
        old_vocab: path of the vocabulary file the checkpoint was trained with.
        old_vocab_size: how many of its first tokens the checkpoint used; -1
            for all. As in tf.estimator, only `axis=0` looks at it.
        backup_initializer: called as `backup_initializer(shape)` for the
            values of rows without an old token, like a
            `tf.compat.v1` or Keras initializer; None gives zeros.
        axis: 0 when the vocabulary indexes rows (embeddings), 1 when it
            indexes columns (an output layer over class names).

    Raises:
        TypeError: a field has the wrong type.
        ValueError: a size is out of range, or `axis` is neither 0 nor 1.

    Example:
        >>> info = VocabInfo("new_vocab.txt", 100, 1, "old_vocab.txt")
        >>> info.axis
        0
    """

    __slots__ = ()

    def __new__(
        cls,
        new_vocab: str | os.PathLike[str],
        new_vocab_size: int,
        num_oov_buckets: int,
        old_vocab: str | os.PathLike[str],
        old_vocab_size: int = -1,
        backup_initializer: Callable[..., Any] | None = None,
        axis: int = 0,
    ) -> VocabInfo:
        new_vocab = _path("VocabInfo.new_vocab", new_vocab)
        old_vocab = _path("VocabInfo.old_vocab", old_vocab)
        _integer("VocabInfo.new_vocab_size", new_vocab_size, minimum=1)
        _integer("VocabInfo.num_oov_buckets", num_oov_buckets, minimum=0)
        _integer("VocabInfo.old_vocab_size", old_vocab_size, minimum=-1)
        if old_vocab_size == 0:
            raise ValueError(
                "VocabInfo.old_vocab_size=0 leaves no old token to warm-start "
                "from. Pass -1 to use the whole old vocabulary, or a positive count."
            )
        if backup_initializer is not None and not callable(backup_initializer):
            raise TypeError(
                "VocabInfo.backup_initializer must be None or a callable taking "
                f"a shape (an initializer), got {backup_initializer!r}."
            )
        if isinstance(axis, bool) or axis not in (0, 1):
            raise ValueError(
                f"VocabInfo.axis must be 0 (vocabulary along rows) or 1 (along "
                f"columns), got {axis!r}."
            )
        return super().__new__(
            cls,
            new_vocab,
            int(new_vocab_size),
            int(num_oov_buckets),
            old_vocab,
            int(old_vocab_size),
            backup_initializer,
            int(axis),
        )


class WarmStartSettings(
    collections.namedtuple(
        "WarmStartSettings",
        [
            "ckpt_to_initialize_from",
            "vars_to_warm_start",
            "var_name_to_vocab_info",
            "var_name_to_prev_var_name",
        ],
    )
):
    """Which variables to initialise from which checkpoint, and how.

    Args:
        ckpt_to_initialize_from: a checkpoint prefix, or a directory whose
            latest checkpoint is used.
        vars_to_warm_start: one regex, matched (`re.match`, so from the start)
            against the names of the *trainable* variables, as `'dense/'`;
            or a list of such regexes matched against *all* checkpointed
            variables, optimizer slots and `global_step` included; or a list
            of variables; or None for only the variables in
            `var_name_to_vocab_info`. Names are matched with their `:0`
            suffix, as in TF1 graphs (`'v2[^/]'` matches `v2` but not
            `v2/Momentum`).
        var_name_to_vocab_info: variable name -> `VocabInfo`, for variables
            whose vocabulary changed since the checkpoint.
        var_name_to_prev_var_name: variable name -> the name its value has in
            the checkpoint, for variables that were renamed. It does not
            select variables; `vars_to_warm_start` does.

    Raises:
        TypeError: a field has the wrong type.
        ValueError: `ckpt_to_initialize_from` is empty or a regex is invalid.

    Example:
        >>> ws = WarmStartSettings("/tmp/old_model", vars_to_warm_start="dense")
        >>> ws.var_name_to_prev_var_name
        {}
    """

    __slots__ = ()

    def __new__(
        cls,
        ckpt_to_initialize_from: str | os.PathLike[str],
        vars_to_warm_start: str | Sequence[Any] | None = ".*",
        var_name_to_vocab_info: Mapping[str, VocabInfo] | None = None,
        var_name_to_prev_var_name: Mapping[str, str] | None = None,
    ) -> WarmStartSettings:
        if ckpt_to_initialize_from is None or ckpt_to_initialize_from in ("", b""):
            raise ValueError(
                "WarmStartSettings.ckpt_to_initialize_from must be set: pass the "
                "checkpoint (or model directory) to warm-start from."
            )
        path = _path(
            "WarmStartSettings.ckpt_to_initialize_from", ckpt_to_initialize_from
        )
        _check_selection(vars_to_warm_start)
        vocab_infos = {
            name: _as_vocab_info(name, info)
            for name, info in _mapping(
                "WarmStartSettings.var_name_to_vocab_info", var_name_to_vocab_info
            ).items()
        }
        prev_names = _mapping(
            "WarmStartSettings.var_name_to_prev_var_name", var_name_to_prev_var_name
        )
        for name, prev_name in prev_names.items():
            if not isinstance(prev_name, str) or not prev_name:
                raise TypeError(
                    "WarmStartSettings.var_name_to_prev_var_name must map names to "
                    f"checkpoint names (non-empty str); {name!r} maps to {prev_name!r}."
                )
        return super().__new__(cls, path, vars_to_warm_start, vocab_infos, prev_names)


def as_settings(warm_start_from: Any) -> WarmStartSettings | None:
    """`Estimator(warm_start_from=...)` as settings: a path warms all trainables.

    Args:
        warm_start_from: None, a `WarmStartSettings`, or the path of a
            checkpoint, of a directory of checkpoints, or of a SavedModel
            (whose `variables/variables` checkpoint is then used).

    Returns:
        The settings, or None for no warm start.

    Raises:
        ValueError: `warm_start_from` is of another type (also a TypeError).
    """
    if warm_start_from is None or isinstance(warm_start_from, WarmStartSettings):
        return warm_start_from
    if isinstance(warm_start_from, (str, bytes, os.PathLike)):
        path = _path("warm_start_from", warm_start_from)
        saved_model_variables = os.path.join(path, "variables", "variables")
        if tf.io.gfile.exists(saved_model_variables + ".index"):
            logger.info("Warm-starting from the SavedModel at %s.", path)
            path = saved_model_variables
        return WarmStartSettings(path)
    raise WarmStartFromTypeError(
        "warm_start_from must be a string or a WarmStartSettings, instead got "
        f"{type(warm_start_from)}: {warm_start_from!r}. Pass a checkpoint path, a "
        "model directory, a SavedModel directory or a "
        "keras_estimator.WarmStartSettings."
    )


class WarmStartFromTypeError(ValueError, TypeError):
    """`warm_start_from` of another type.

    A ValueError as in tf.estimator 2.15, and a TypeError as this package
    raised before.
    """


def warm_start(
    variables: Mapping[str, tf.Variable], settings: WarmStartSettings
) -> list[str]:
    """Assigns the selected variables their values from the settings' checkpoint.

    Args:
        variables: every checkpointed variable of the model, by TF1 name, in
            creation order; `trainable` tells the two selection forms apart.
        settings: what to warm-start from and how.

    Returns:
        The names of the variables that were assigned.

    Raises:
        ValueError: no checkpoint at the path; a setting names a variable that
            is not selected; a value is missing from the checkpoint or has
            another shape or dtype; a vocabulary file is missing or too short.
    """
    path = _resolve_checkpoint(settings.ckpt_to_initialize_from)
    with _checkpoint.open_reader(path) as reader:
        return _warm_start_from(_by_name(reader), path, variables, settings)


def _by_name(reader: Any) -> Any:
    """`reader`, answering also by the names an object-based checkpoint's variables had.

    A SavedModel's `variables/variables` (an export of this package, or any
    TF2 SavedModel) keys its values by object path; 2.15's exports keyed them
    by variable name, and warm starts read them so.
    """
    keys = reader.get_variable_to_shape_map()
    if object_checkpoint.OBJECT_GRAPH_KEY not in keys:
        return reader
    return _NamedReader(reader, object_checkpoint.stored_names(reader, keys), keys)


class _NamedReader:
    """A checkpoint reader whose values are found by name -> key.

    `shapes` is the reader's own variable-to-shape map, already read.
    """

    def __init__(
        self, reader: Any, keys: Mapping[str, str], shapes: Mapping[str, Any]
    ) -> None:
        self._reader = reader
        self._keys = dict(keys)
        dtypes = reader.get_variable_to_dtype_map()
        self._shapes = {name: shapes[key] for name, key in self._keys.items()}
        self._dtypes = {name: dtypes[key] for name, key in self._keys.items()}

    def get_variable_to_shape_map(self) -> dict[str, Any]:
        return dict(self._shapes)

    def get_variable_to_dtype_map(self) -> dict[str, Any]:
        return dict(self._dtypes)

    def has_tensor(self, name: str) -> bool:
        return name in self._keys

    def get_tensor(self, name: str) -> Any:
        return self._reader.get_tensor(self._keys.get(name, name))


def _warm_start_from(
    reader: Any,
    path: str,
    variables: Mapping[str, tf.Variable],
    settings: WarmStartSettings,
) -> list[str]:
    stored = reader.get_variable_to_shape_map()
    selected = _select(variables, settings.vars_to_warm_start)
    _check_settings_used(settings, selected)
    vocabularies: dict[str, list[str]] = {}
    values: dict[str, np.ndarray] = {}
    described: list[str] = []
    for name in selected:
        prev_name = settings.var_name_to_prev_var_name.get(name, name)
        vocab_info = settings.var_name_to_vocab_info.get(name)
        if vocab_info is None and not settings.vars_to_warm_start:
            continue  # An empty selection form warms vocabulary variables only.
        variable = variables[name]
        old = _stored_value(reader, stored, path, name, prev_name, variable, settings)
        source = name if prev_name == name else f"{name} <- {prev_name}"
        if vocab_info is None:
            if old.shape != tuple(variable.shape):
                raise ValueError(
                    f"Cannot warm-start variable {name!r}: it has shape "
                    f"{tuple(variable.shape)} but {prev_name!r} in checkpoint {path} "
                    f"has shape {old.shape}. Leave it out of vars_to_warm_start, or "
                    "give it a VocabInfo if its vocabulary changed."
                )
            values[name] = old
            described.append(source)
        else:
            values[name] = remap_by_vocab(
                name, prev_name, tuple(variable.shape), old, vocab_info, vocabularies
            )
            described.append(f"{source} (vocabulary remapped, axis {vocab_info.axis})")
    for name, value in values.items():
        variable = variables[name]
        variable.assign(value.astype(variable.dtype.as_numpy_dtype))
    logger.info(
        "Warm-started %d variables from %s: %s.",
        len(values),
        path,
        ", ".join(described) or "none",
    )
    return list(values)


# ---- selection ----------------------------------------------------------------
def _select(variables: Mapping[str, tf.Variable], selection: Any) -> list[str]:
    """Names picked by `vars_to_warm_start`, in the variables' order."""
    if selection is None or isinstance(selection, str):
        trainable = [name for name, v in variables.items() if v.trainable]
        if selection is None:
            return trainable
        chosen = _matching(selection, trainable)
        if not chosen:
            others = _matching(
                selection, [n for n, v in variables.items() if not v.trainable]
            )
            hint = (
                f" It matches the non-trainable {others}; a single regex covers "
                f"trainable variables only, pass a list ([{selection!r}]) to include them."
                if others
                else ""
            )
            logger.warning(
                "vars_to_warm_start=%r matches no trainable variable, so none is "
                "warm-started by it.%s Trainable variables: %s.",
                selection,
                hint,
                trainable,
            )
        return chosen
    if all(isinstance(item, str) for item in selection):
        chosen_set: set[str] = set()
        for pattern in selection:
            matched = _matching(pattern, list(variables))
            if not matched:
                logger.warning(
                    "vars_to_warm_start entry %r matches no variable. Variables: %s.",
                    pattern,
                    list(variables),
                )
            chosen_set.update(matched)
        if not selection:
            logger.warning("vars_to_warm_start=[] selects no variable to warm-start.")
        return [name for name in variables if name in chosen_set]
    by_identity = {id(v): name for name, v in variables.items()}
    names: set[str] = set()
    for item in selection:
        name = by_identity.get(id(as_tf_variable(item)))
        if name is None:
            raise ValueError(
                f"vars_to_warm_start lists {item!r}, which is not a variable of "
                f"this model_fn. Its variables are {list(variables)}; list names "
                "(regexes) instead of variable objects."
            )
        names.add(name)
    return [name for name in variables if name in names]


def _matching(pattern: str, names: list[str]) -> list[str]:
    # TF1 matched the graph name, which ends in ':0'; patterns such as 'v2[^/]'
    # rely on it.
    compiled = re.compile(pattern)
    return [name for name in names if compiled.match(name + ":0")]


def _check_settings_used(settings: WarmStartSettings, selected: list[str]) -> None:
    """Every renamed or vocabulary variable must be among those warm-started."""
    for field in ("var_name_to_prev_var_name", "var_name_to_vocab_info"):
        unused = sorted(set(getattr(settings, field)) - set(selected))
        if unused:
            hints = {name: _close(name, selected) for name in unused}
            raise ValueError(
                f"WarmStartSettings.{field} names variables that are not "
                f"warm-started: {unused} (closest selected names: {hints}). "
                f"Selected by vars_to_warm_start={settings.vars_to_warm_start!r}: "
                f"{selected}. Fix the names, or widen vars_to_warm_start (a single "
                "regex covers trainable variables only)."
            )


# ---- reading the checkpoint ---------------------------------------------------
def _resolve_checkpoint(source: str) -> str:
    if tf.io.gfile.isdir(source):
        # By exact name (a glob finds nothing in `run[1]`); the source's state
        # file is read, never rewritten.
        path = _checkpoint.latest(source, rewrite_state=False)
        if path is None:
            raise ValueError(
                f"Cannot warm-start: directory {source!r} holds no checkpoint. "
                "Point ckpt_to_initialize_from at a trained model_dir or a "
                "checkpoint prefix such as 'model_dir/model.ckpt-1000'."
            )
        return path
    if not tf.io.gfile.exists(source + ".index"):
        raise ValueError(
            f"Cannot warm-start: no checkpoint at {source!r} (no {source}.index). "
            "Point ckpt_to_initialize_from at a trained model_dir or a checkpoint "
            "prefix such as 'model_dir/model.ckpt-1000'."
        )
    return source


def _stored_value(
    reader: Any,
    stored: Mapping[str, Any],
    path: str,
    name: str,
    prev_name: str,
    variable: tf.Variable,
    settings: WarmStartSettings,
) -> np.ndarray:
    if prev_name not in stored:
        how = (
            f"var_name_to_prev_var_name maps {name!r} to {prev_name!r}"
            if prev_name != name
            else f"variable {name!r} is selected by vars_to_warm_start="
            f"{settings.vars_to_warm_start!r}"
        )
        raise ValueError(
            f"Cannot warm-start: {how}, but checkpoint {path} has no "
            f"{prev_name!r}. Close names in the checkpoint: "
            f"{_close(prev_name, list(stored))} (of {len(stored)}). Map it with "
            "var_name_to_prev_var_name, or leave it out of vars_to_warm_start."
        )
    stored_dtype = reader.get_variable_to_dtype_map()[prev_name]
    if stored_dtype.base_dtype != variable.dtype.base_dtype:
        raise ValueError(
            f"Cannot warm-start variable {name!r} ({variable.dtype.name}) from "
            f"{prev_name!r}, stored as {stored_dtype.name} in checkpoint {path}."
        )
    return np.asarray(reader.get_tensor(prev_name))


def _close(name: str, candidates: list[str]) -> list[str]:
    close = difflib.get_close_matches(name, candidates, n=5, cutoff=0.5)
    return close or sorted(candidates)[:10]


# ---- argument checks ----------------------------------------------------------
def _path(field: str, value: Any) -> str:
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError(
            f"{field} must be a path (str), got {type(value).__name__}: {value!r}."
        )
    path = os.fspath(value)
    if isinstance(path, bytes):
        path = path.decode("utf-8")
    if not path:
        raise ValueError(f"{field} must be a non-empty path.")
    return path


def _integer(field: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"{field} must be an int, got {type(value).__name__}: {value!r}."
        )
    if value < minimum:
        raise ValueError(f"{field} must be >= {minimum}, got {value}.")


def _mapping(field: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise TypeError(
            f"{field} must be a dict keyed by variable name (str), got {value!r}."
        )
    return dict(value)


def _as_vocab_info(name: str, info: Any) -> VocabInfo:
    if isinstance(info, VocabInfo):
        return info
    # tf.compat.v1.train.VocabInfo has the same fields: take it as ours.
    if isinstance(info, tuple) and getattr(info, "_fields", None) == VocabInfo._fields:
        return VocabInfo(*info)
    raise TypeError(
        f"WarmStartSettings.var_name_to_vocab_info[{name!r}] must be a "
        f"keras_estimator.VocabInfo, got {type(info).__name__}: {info!r}."
    )


def _check_selection(selection: Any) -> None:
    if selection is None:
        return
    patterns: list[str]
    if isinstance(selection, str):
        patterns = [selection]
    elif isinstance(selection, (list, tuple)) and all(
        isinstance(s, str) for s in selection
    ):
        patterns = list(selection)
    elif isinstance(selection, (list, tuple)) and all(
        as_tf_variable(item) is not None for item in selection
    ):
        return
    else:
        raise TypeError(
            "WarmStartSettings.vars_to_warm_start must be a regex (str), a list of "
            f"regexes, a list of variables or None, got {selection!r}."
        )
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as error:
            raise ValueError(
                f"WarmStartSettings.vars_to_warm_start has an invalid regex "
                f"{pattern!r}: {error}."
            ) from None
