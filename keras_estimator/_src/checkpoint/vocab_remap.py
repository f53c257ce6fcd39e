"""Rows (or columns) of a checkpointed matrix rearranged by vocabulary token.

When the vocabulary changes between a checkpoint and the model warm-started
from it, row `i` of an embedding (column `i` of an output layer over class
names) must follow its token, not its position. This module computes
the new value as tf.estimator 2.15 did: rows of tokens in both vocabularies
come from the checkpoint; rows of new tokens, then the out-of-vocabulary
rows, come from the backup initializer, asked for values in the same shapes
and order as tf.estimator asked (so deterministic initializers give the same
values); without one they are zeros.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np
import tensorflow as tf

if TYPE_CHECKING:
    from keras_estimator._src.checkpoint.warm_start import VocabInfo

logger = logging.getLogger("keras_estimator")


def remap_by_vocab(
    name: str,
    prev_name: str,
    shape: tuple[int, ...],
    old: np.ndarray,
    info: VocabInfo,
    cache: dict[str, list[str]],
) -> np.ndarray:
    """The value of a new variable whose vocabulary axis follows `info`.

    Args:
        name: the new variable's name (for messages).
        prev_name: the name `old` has in the checkpoint (for messages).
        shape: the new variable's shape.
        old: the checkpoint's value.
        info: the vocabularies, OOV buckets, backup initializer and axis.
        cache: vocabulary file contents already read, by path.

    Returns:
        A float64 array of `shape`.

    Raises:
        ValueError: the shapes do not fit `info`, a vocabulary file is missing
            or too short, or the old vocabulary repeats a token.
    """
    what = (
        f"variable {name!r} of shape {shape} ({prev_name!r} has shape "
        f"{old.shape} in the checkpoint)"
    )
    if len(shape) != 2 or old.ndim != 2:
        raise ValueError(
            f"VocabInfo applies to 2-D variables only; got {what}. Remove its VocabInfo."
        )
    rows, cols = shape
    if info.axis == 1:
        if cols != info.new_vocab_size + info.num_oov_buckets:
            raise ValueError(
                f"Cannot warm-start {what}: with axis=1 it needs new_vocab_size "
                f"{info.new_vocab_size} + num_oov_buckets {info.num_oov_buckets} "
                "columns. Make its VocabInfo agree with the variable."
            )
        if info.old_vocab_size != -1:
            logger.warning(
                "VocabInfo.old_vocab_size=%d is ignored for %r: with axis=1 the "
                "whole old vocabulary is used, as in tf.estimator.",
                info.old_vocab_size,
                name,
            )
        _check_other_dim(what, shape, old, along=0)
        new_tokens = _vocabulary(info, "new_vocab", info.new_vocab_size, cache, name)
        old_tokens = _vocabulary(info, "old_vocab", -1, cache, name)
        # Columns are remapped as the rows of the transposes.
        return _remap_rows(
            what, old.T, (cols, rows), old_tokens, new_tokens, info, transposed=True
        ).T
    if rows > info.new_vocab_size + info.num_oov_buckets:
        raise ValueError(
            f"Cannot warm-start {what}: it has more rows than new_vocab_size "
            f"{info.new_vocab_size} + num_oov_buckets {info.num_oov_buckets}. "
            "Make its VocabInfo agree with the variable."
        )
    _check_other_dim(what, shape, old, along=1)
    vocab_rows = min(rows, info.new_vocab_size)
    new_tokens = _vocabulary(info, "new_vocab", vocab_rows, cache, name)
    old_tokens = _vocabulary(info, "old_vocab", info.old_vocab_size, cache, name)
    return _remap_rows(what, old, (rows, cols), old_tokens, new_tokens, info, False)


def _check_other_dim(
    what: str, shape: tuple[int, ...], old: np.ndarray, along: int
) -> None:
    if old.shape[along] != shape[along]:
        raise ValueError(
            f"Cannot warm-start {what}: only the vocabulary axis may differ, "
            f"but axis {along} differs too."
        )


def _remap_rows(
    what: str,
    old: np.ndarray,
    shape: tuple[int, int],
    old_tokens: list[str],
    new_tokens: list[str],
    info: VocabInfo,
    transposed: bool,
) -> np.ndarray:
    """Rows of `old` by token; missing and OOV rows from the backup initializer."""
    rows, width = shape
    old_index: dict[str, int] = {}
    for index, token in enumerate(old_tokens):
        if token in old_index:
            raise ValueError(
                f"Old vocabulary {info.old_vocab!r} lists {token!r} twice (lines "
                f"{old_index[token] + 1} and {index + 1}); each token needs one row."
            )
        old_index[token] = index
    found = [old_index.get(token, -1) for token in new_tokens]
    if max(found, default=-1) >= old.shape[0]:
        raise ValueError(
            f"Old vocabulary {info.old_vocab!r} has tokens up to line "
            f"{max(found) + 1}, but {what} has only {old.shape[0]} entries along the "
            "vocabulary axis. Set VocabInfo.old_vocab_size to the vocabulary the "
            "checkpoint was trained with."
        )
    result = np.zeros((rows, width), dtype=np.float64)
    present = [i for i, index in enumerate(found) if index >= 0]
    missing = [i for i, index in enumerate(found) if index < 0]
    result[present] = old[[found[i] for i in present]]
    # tf.estimator asks the initializer for all missing cells at once, as a
    # column, in the layout of the new variable, then for the OOV block.
    if transposed:
        cells = _backup(info, [width * len(missing), 1]).reshape(width, len(missing))
        result[missing] = cells.T
    else:
        result[missing] = _backup(info, [len(missing) * width, 1]).reshape(
            len(missing), width
        )
    oov_rows = rows - len(new_tokens)
    if oov_rows > 0:
        block = [width, oov_rows] if transposed else [oov_rows, width]
        oov = _backup(info, block)
        result[len(new_tokens) :] = oov.T if transposed else oov
    return result


def _backup(info: VocabInfo, shape: list[int]) -> np.ndarray:
    if info.backup_initializer is None:
        return np.zeros(shape)
    with tf.init_scope():
        value = np.asarray(info.backup_initializer(shape))
    if value.shape != tuple(shape):
        raise ValueError(
            f"VocabInfo.backup_initializer {info.backup_initializer!r} returned "
            f"shape {value.shape} when asked for {shape}."
        )
    return value


def _vocabulary(
    info: VocabInfo, field: str, size: int, cache: dict[str, list[str]], name: str
) -> list[str]:
    """The first `size` tokens (all for -1) of a vocabulary file, one per line."""
    path = getattr(info, field)
    if path not in cache:
        if not tf.io.gfile.exists(path):
            raise ValueError(
                f"VocabInfo.{field} of variable {name!r}: vocabulary file "
                f"{path!r} does not exist."
            )
        with tf.io.gfile.GFile(path, "r") as handle:
            text = handle.read()
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        cache[path] = [line.rstrip("\r") for line in lines]
    tokens = cache[path]
    if size == -1:
        return tokens
    if len(tokens) < size:
        raise ValueError(
            f"VocabInfo.{field} of variable {name!r}: {path!r} has {len(tokens)} "
            f"tokens, fewer than the {size} it should provide."
        )
    return tokens[:size]
