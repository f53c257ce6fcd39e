"""tf.keras 2 names of a Keras 3 optimizer's variables, to resume tf.estimator's model_dirs.

A model_fn of the TF 2.x era that trained with a tf.keras optimizer (the
default ones before TensorFlow 2.11, `tf.keras.optimizers.legacy` after) left
checkpoints holding the optimizer's variables under tf.keras 2's names:
`<Optimizer>/<variable>/<slot>` for slots (`Adam/sequential/dense/kernel/m`),
`<Optimizer>/learning_rate`, and `<Optimizer>/iter` when the optimizer kept
its own step count. The same model_fn under Keras 3 makes
`<optimizer>/<variable with '_' for '/'>_<slot>`
(`adam/sequential_dense_kernel_momentum`) and `<optimizer>/iteration`, the
optimizer's name in snake case (`rm_sprop` for RMSprop).

`aliases` finds, for the names a checkpoint lacks, the one tf.keras 2 name
that holds the same value, so such a model_dir resumes with its optimizer
state. Slots are matched per Keras 3 slot name: Adam's and Nadam's
`momentum`/`velocity`/`velocity_hat` were `m`/`v`/`vhat`, RMSprop's
`velocity`/`average_gradient` were `rms`/`mg`, and SGD's and RMSprop's
`momentum`, Adagrad's and Ftrl's `accumulator` and Ftrl's `linear` kept their
names (tests/checkpoint/test_keras2_optimizer_names.py resumes Adam, SGD,
Adagrad and RMSprop model_dirs that 2.15 wrote). A name with no candidate, or
with several, stays missing.

tf.keras 2 built in a graph (as 2.15's `model_to_estimator` did) put the
optimizer's variables under `training/` (`training/Adam/dense/kernel/m`), and
an optimizer whose `iterations` was the global step (`model_to_estimator`'s,
and model_fns that set `optimizer.iterations = global_step`) left no `iter`:
the global step then holds the count of its updates.
"""

from __future__ import annotations

from collections.abc import Iterable

# Keras 3 slot -> the names tf.keras 2 optimizers gave that slot.
_SLOTS = {
    "momentum": ("m", "momentum"),
    "velocity": ("v", "rms"),
    "velocity_hat": ("vhat",),
    "average_gradient": ("mg",),
    "accumulator": ("accumulator",),
    "linear": ("linear",),
}
# Keras 3 optimizer variable -> tf.keras 2's, both under the optimizer's name.
_SETTINGS = {"learning_rate": "learning_rate", "iteration": "iter"}


def aliases(missing: Iterable[str], keys: Iterable[str]) -> dict[str, str]:
    """Maps each missing Keras 3 optimizer variable name to its tf.keras 2 key.

    Args:
        missing: Names of variables the checkpoint does not hold.
        keys: The checkpoint's keys.

    Returns:
        name -> key, for the names that have exactly one candidate key.
    """
    keys = list(keys)
    found = {}
    for name in missing:
        candidates = [key for key in keys if _same_variable(name, key)]
        if not candidates:
            # A slot of a variable Keras 3 names under its model
            # (`sequential/dense/kernel`) and tf.keras 2 saved without it
            # (`dense/kernel`): the longest, most specific, such name.
            nested = sorted(
                (key for key in keys if _same_variable(name, key, nested=True)),
                key=len,
                reverse=True,
            )
            if len(nested) == 1 or (
                len(nested) > 1 and len(nested[0]) > len(nested[1])
            ):
                candidates = nested[:1]
        if len(candidates) == 1:
            found[name] = candidates[0]
    for name in missing:
        optimizer, _, rest = name.partition("/")
        if (
            rest == "iteration"
            and name not in found
            and "global_step" in keys
            and any(other.partition("/")[0] == optimizer for other in found)
        ):
            # The optimizer's other variables are tf.keras 2's, and it kept no
            # step count of its own: it counted in the global step.
            found[name] = "global_step"
    return found


def _same_variable(name: str, key: str, nested: bool = False) -> bool:
    optimizer, _, rest = name.partition("/")
    owner, _, tail = key.removeprefix("training/").partition("/")
    if not rest or not tail or _plain(owner) != _plain(optimizer):
        return False
    if rest in _SETTINGS:
        return tail == _SETTINGS[rest]
    variable, _, slot = tail.rpartition("/")
    if not variable:
        return False
    flat = variable.replace("/", "_")
    return any(
        slot in names
        and (
            rest.endswith(f"_{flat}_{keras3_slot}")
            if nested
            else rest == f"{flat}_{keras3_slot}"
        )
        for keras3_slot, names in _SLOTS.items()
    )


def _plain(optimizer_name: str) -> str:
    # Keras 3 names optimizers in snake case from the class ("rm_sprop" for
    # RMSprop); tf.keras 2 used the class name ("RMSprop").
    return optimizer_name.lower().replace("_", "")
