"""Checkpoints a killed retention left behind are removed by later saves.

A save writes its files, replaces the state file, then deletes what retention
dropped. A kill between the last two leaves a complete `model.ckpt-N` that no
state entry names; the next saves must remove it, so a model_dir holds
`keep_checkpoint_max` checkpoints (one more while a save is under way).
"""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from tests.checkpoint.test_model_dir_faults import (
    assert_state_names_existing_files,
    digest,
    estimator,
    finish_child,
    listed_paths,
    make_sibling,
    plant_user_files,
    small_variables,
    start_child,
    train_input,
    user_files,
)


class _Killed(BaseException):
    """Stands for SIGKILL: nothing after the stage runs."""


def _steps_on_disk(model_dir):
    return sorted(
        int(m.group(1))
        for name in os.listdir(model_dir)
        if (m := re.fullmatch(r"model\.ckpt-(\d+)\.index", name))
    )


def _save(model_dir, step, max_to_keep, kill_at=None, keep_every_n_hours=10000.0):
    policy = _checkpoint.RetentionPolicy(max_to_keep, keep_every_n_hours)
    if kill_at is None:
        _checkpoint.save(small_variables(step), str(model_dir), step, policy)
        return
    original = _checkpoint._reached

    def reached(stage):
        if stage == kill_at:
            raise _Killed(stage)

    _checkpoint._reached = reached
    try:
        with pytest.raises(_Killed):
            _checkpoint.save(small_variables(step), str(model_dir), step, policy)
    finally:
        _checkpoint._reached = original


@pytest.mark.parametrize("max_to_keep", [1, 3])
def test_a_checkpoint_left_by_a_kill_after_the_state_file_is_removed(tmp_path, max_to_keep):
    model_dir = tmp_path / "run[1]"
    plant_user_files(model_dir)
    for step in range(max_to_keep):
        _save(model_dir, step, max_to_keep)
    # This save lists itself and drops step 0, then dies before deleting it.
    _save(model_dir, max_to_keep, max_to_keep, kill_at="state_written")
    assert _steps_on_disk(model_dir) == list(range(max_to_keep + 1))
    for step in range(max_to_keep + 1, max_to_keep + 4):
        _save(model_dir, step, max_to_keep)
    # Before: step 0 stayed on disk for good (max_to_keep + 1 checkpoints).
    assert _steps_on_disk(model_dir) == list(range(4, max_to_keep + 4))
    assert_state_names_existing_files(model_dir)
    assert len(user_files(model_dir)) == 7


@given(
    max_to_keep=st.integers(1, 3),
    kills=st.lists(st.booleans(), min_size=1, max_size=8),
)
def test_after_any_killed_retentions_a_clean_save_leaves_max_to_keep(
    tmp_path_factory, max_to_keep, kills
):
    model_dir = tmp_path_factory.mktemp("orphans")
    kills_in_a_row = 0
    for step, killed in enumerate(kills):
        _save(model_dir, step, max_to_keep, kill_at="state_written" if killed else None)
        kills_in_a_row = kills_in_a_row + 1 if killed else 0
        # One extra per killed save since the last that finished, no more.
        assert len(_steps_on_disk(model_dir)) <= max_to_keep + kills_in_a_row
    last = len(kills)
    _save(model_dir, last, max_to_keep)
    expected = list(range(max(0, last + 1 - max_to_keep), last + 1))
    assert _steps_on_disk(model_dir) == expected
    assert [os.path.basename(p) for p in listed_paths(model_dir)] == [
        f"model.ckpt-{s}" for s in expected
    ]


def test_checkpoints_kept_every_n_hours_are_not_taken_for_orphans(tmp_path):
    # Every checkpoint leaving the window is preserved (a tiny period):
    # unlisted and older than the kept ones, yet never deleted.
    for step in range(6):
        _save(tmp_path, step, 2, keep_every_n_hours=1e-9)
    assert _steps_on_disk(tmp_path) == list(range(6))
    assert [os.path.basename(p) for p in listed_paths(tmp_path)] == [
        "model.ckpt-4", "model.ckpt-5"
    ]


def test_a_sigkilled_retention_then_training_leaves_keep_checkpoint_max(tmp_path):
    """A real SIGKILL after the state file of the 5th save (step 8), then more saves."""
    model_dir = tmp_path / "run*"
    plant_user_files(model_dir)
    sibling = make_sibling(tmp_path)
    sibling_files = digest(sibling)
    saved, died = finish_child(start_child(model_dir, "state_written", 5, keep_max=3))
    assert saved == [0, 2, 4, 6] and died == ("state_written", 8)
    # Step 2, dropped by that save, is still there: 4 checkpoints for 3.
    assert _steps_on_disk(model_dir) == [2, 4, 6, 8]
    estimator(model_dir, keep_max=3).train(train_input(), max_steps=14)
    assert _steps_on_disk(model_dir) == [10, 12, 14]
    assert_state_names_existing_files(model_dir)
    assert len(user_files(model_dir)) == 7
    assert digest(sibling) == sibling_files
