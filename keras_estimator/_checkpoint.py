"""model_dir checkpoints in the TF1 name-based format tf.estimator wrote.

Files: `model.ckpt-<global_step>.index` / `.data-00000-of-00001`, keyed by
variable name (`dense/kernel`, `global_step`, ...), and the `checkpoint` state
file listing the kept checkpoints with relative paths. Retention follows the
TF1 Saver: keep the newest `keep_checkpoint_max`; a checkpoint leaving that
window stays on disk (out of the list) if it is at least
`keep_checkpoint_every_n_hours` newer than the last one so preserved.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time

import numpy as np
import tensorflow as tf

logger = logging.getLogger("keras_estimator")

CHECKPOINT_BASENAME = "model.ckpt"


@dataclasses.dataclass(frozen=True)
class RetentionPolicy:
    """Which checkpoints to keep.

    Attributes:
        max_to_keep: newest checkpoints listed and kept; None or 0 keeps all.
        keep_every_n_hours: additionally keep one checkpoint per this period.
    """

    max_to_keep: int | None = 5
    keep_every_n_hours: float = 10000.0


def save(
    variables: dict[str, tf.Variable],
    model_dir: str,
    global_step: int,
    policy: RetentionPolicy,
) -> str:
    """Writes `model.ckpt-<global_step>` and updates the state file.

    Returns:
        The checkpoint's path prefix.
    """
    prefix = os.path.join(model_dir, f"{CHECKPOINT_BASENAME}-{global_step}")
    names = sorted(variables)
    tensors = [variables[n].read_value() for n in names]
    temp_prefix = prefix + "_temp"
    tf.raw_ops.SaveV2(
        prefix=temp_prefix,
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=tensors,
    )
    tf.raw_ops.MergeV2Checkpoints(
        checkpoint_prefixes=[temp_prefix],
        destination_prefix=prefix,
        delete_old_dirs=True,
    )
    _record(model_dir, prefix, policy)
    logger.info("Saving checkpoints for %d into %s.", global_step, prefix)
    return prefix


def _record(model_dir: str, prefix: str, policy: RetentionPolicy) -> None:
    state = tf.train.get_checkpoint_state(model_dir)
    now = time.time()
    paths: list[str] = []
    stamps: list[float] = []
    last_preserved = now
    if state is not None:
        paths = list(state.all_model_checkpoint_paths)
        stamps = list(state.all_model_checkpoint_timestamps) or [now] * len(paths)
        if state.last_preserved_timestamp:
            last_preserved = state.last_preserved_timestamp
    paths = [os.path.basename(p) for p in paths]
    name = os.path.basename(prefix)
    if name in paths:
        index = paths.index(name)
        del paths[index], stamps[index]
    paths.append(name)
    stamps.append(now)
    if policy.max_to_keep:
        while len(paths) > policy.max_to_keep:
            old, stamp = paths.pop(0), stamps.pop(0)
            if stamp - last_preserved >= policy.keep_every_n_hours * 3600:
                last_preserved = stamp
                continue
            _delete(os.path.join(model_dir, old))
    _write_state(model_dir, paths, stamps, last_preserved)


def _write_state(
    model_dir: str, paths: list[str], stamps: list[float], last_preserved: float
) -> None:
    """Writes the `checkpoint` state file (text proto), replacing it atomically."""
    lines = [f'model_checkpoint_path: "{paths[-1]}"']
    lines += [f'all_model_checkpoint_paths: "{p}"' for p in paths]
    lines += [f"all_model_checkpoint_timestamps: {s!r}" for s in stamps]
    lines.append(f"last_preserved_timestamp: {last_preserved!r}")
    target = os.path.join(model_dir, "checkpoint")
    temp = target + ".tmp"
    with tf.io.gfile.GFile(temp, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    tf.io.gfile.rename(temp, target, overwrite=True)


def _delete(prefix: str) -> None:
    for path in tf.io.gfile.glob(prefix + ".*"):
        tf.io.gfile.remove(path)


def latest(model_dir: str) -> str | None:
    """The newest checkpoint prefix in `model_dir`, or None."""
    return tf.train.latest_checkpoint(model_dir)


def step_of(checkpoint_path: str) -> int:
    """The global step stored in a checkpoint (0 when it holds none)."""
    reader = tf.train.load_checkpoint(checkpoint_path)
    if reader.has_tensor("global_step"):
        return int(reader.get_tensor("global_step"))
    return 0


def restore(
    variables: dict[str, tf.Variable], checkpoint_path: str, *, strict: bool = True
) -> list[str]:
    """Assigns each variable the value stored under its name.

    Args:
        variables: name -> variable.
        checkpoint_path: a checkpoint prefix.
        strict: if True, a variable missing from the checkpoint is an error
            (as a TF1 Saver made it); if False it keeps its value.

    Returns:
        The names that were restored.

    Raises:
        ValueError: a variable is missing (strict) or has another shape.
    """
    reader = tf.train.load_checkpoint(checkpoint_path)
    shapes = reader.get_variable_to_shape_map()
    restored = []
    missing = [n for n in variables if n not in shapes]
    if missing and strict:
        raise ValueError(
            f"Checkpoint {checkpoint_path} has no value for variables {missing} "
            f"that model_fn creates. It holds {sorted(shapes)}. The model_fn "
            "must create the variables (with the same names) that wrote this "
            "checkpoint, or use a new model_dir / warm_start_from."
        )
    for name, variable in variables.items():
        if name not in shapes:
            continue
        stored_shape = tuple(shapes[name])
        if stored_shape != tuple(variable.shape):
            raise ValueError(
                f"Variable {name!r} has shape {tuple(variable.shape)} in model_fn "
                f"but shape {stored_shape} in checkpoint {checkpoint_path}. Use a "
                "model_dir written by this model, or change the model back."
            )
        value = reader.get_tensor(name)
        variable.assign(np.asarray(value, dtype=variable.dtype.as_numpy_dtype))
        restored.append(name)
    return restored


def variable_names(checkpoint_path: str) -> list[str]:
    return sorted(tf.train.load_checkpoint(checkpoint_path).get_variable_to_shape_map())


def variable_value(checkpoint_path: str, name: str) -> np.ndarray:
    reader = tf.train.load_checkpoint(checkpoint_path)
    if not reader.has_tensor(name):
        raise ValueError(
            f"Checkpoint {checkpoint_path} has no variable {name!r}; it has "
            f"{sorted(reader.get_variable_to_shape_map())}."
        )
    return reader.get_tensor(name)
