"""model_dir under faults: kills during a save, damaged and missing files.

Each kill runs `_kill_during_save.py` in its own process, which SIGKILLs
itself at a stage of a save (`_checkpoint._reached`); the test then checks
what a restart finds. The state file is read back with TensorFlow's own
parser, so these checks do not lean on the package's reader.
"""

import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from tests import _models

CHILD = Path(__file__).parents[1] / "_kill_during_save.py"
SAVE_STEPS = 2
STAGES = ("temp_written", "files_written", "state_written", "file_deleted")


# ---- helpers -----------------------------------------------------------------
def small_variables(step):
    return {
        "dense/kernel": tf.Variable(np.full([2, 3], step, dtype="float32")),
        "global_step": tf.Variable(step, dtype=tf.int64),
    }


def save_steps(model_dir, steps, max_to_keep=5):
    policy = _checkpoint.RetentionPolicy(max_to_keep=max_to_keep)
    for step in steps:
        _checkpoint.save(small_variables(step), str(model_dir), step, policy)


def listed_paths(model_dir):
    """The state file's entries, as TensorFlow's parser reads them."""
    state = tf.train.get_checkpoint_state(str(model_dir))
    return [] if state is None else list(state.all_model_checkpoint_paths)


def assert_state_names_existing_files(model_dir):
    state = tf.train.get_checkpoint_state(str(model_dir))
    assert state is not None, os.listdir(model_dir)
    for path in [state.model_checkpoint_path, *state.all_model_checkpoint_paths]:
        assert os.path.exists(path + ".index"), (path, os.listdir(model_dir))
        assert os.path.exists(path + ".data-00000-of-00001"), path


def step_of_latest(model_dir):
    return _checkpoint.step_of(_checkpoint.latest(str(model_dir)))


def digest(directory):
    """name -> sha256 of every file under `directory`."""
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(Path(directory).rglob("*"))
        if p.is_file()
    }


USER_FILES = ("notes.txt", "my.data", "model.ckpt-foo.txt", "model.ckpt-3_temp.txt",
              "model.ckpt-3.index.bak", "my_temp.index", "checkpoint.tmp")


def plant_user_files(model_dir):
    """Files that look like checkpoints but are not this package's."""
    model_dir.mkdir(parents=True, exist_ok=True)
    for name in USER_FILES:
        (model_dir / name).write_text(f"user file {name}\n")


def user_files(model_dir):
    """name -> content of the planted user files still there."""
    return {n: (model_dir / n).read_text() for n in USER_FILES if (model_dir / n).exists()}


def make_sibling(parent, name="run1"):
    """A model_dir next to the one under test that glob patterns would match."""
    sibling = parent / name
    save_steps(sibling, [2, 4])
    return sibling


def estimator(model_dir, keep_max=5):
    config = ke.RunConfig(
        save_checkpoints_steps=SAVE_STEPS,
        keep_checkpoint_max=keep_max,
        save_summary_steps=None,
        log_step_count_steps=None,
    )
    return ke.Estimator(
        _models.mlp_model_fn, model_dir=str(model_dir), config=config, params={"hidden": [4]}
    )


def train_input():
    x, y = _models.make_data()
    return _models.input_fn(x, y)


def start_child(model_dir, stage, save_number, keep_max=1, max_steps=20):
    return subprocess.Popen(
        [sys.executable, str(CHILD), str(model_dir), stage, str(save_number),
         str(SAVE_STEPS), str(keep_max), str(max_steps)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish_child(child):
    """(completed save steps, (stage, step) it died at or None)."""
    stdout, stderr = child.communicate(timeout=180)
    saved = [int(s) for s in re.findall(r"^saved (\d+)$", stdout, re.M)]
    dying = re.search(r"^dying (\w+) (\d+)$", stdout, re.M)
    died = (dying.group(1), int(dying.group(2))) if dying else None
    if died is not None:
        assert child.returncode == -9, (child.returncode, stderr[-2000:])
    else:
        assert child.returncode == 0, stderr[-2000:]
    return saved, died


def check_after_kill(model_dir, saved, died):
    """The invariants a restart relies on, after a kill during a save."""
    assert died is not None
    assert_state_names_existing_files(model_dir)
    step = step_of_latest(model_dir)
    # Never back past a save that completed, never more than one interval lost.
    assert step >= max(saved)
    assert died[1] - step <= SAVE_STEPS
    return step


# ---- kills at each stage of a save -------------------------------------------
# keep_checkpoint_max=1, killed during the 3rd save (step 4): that save's
# retention drops step 2, so a kill before the state file names step 4 must
# leave step 2 on disk. CI runs the stages either side of the state file;
# the in-process ledger test below covers every stage's invariant.
@pytest.mark.parametrize(
    ("stage", "expected_step"),
    [
        pytest.param("temp_written", 2, marks=pytest.mark.slow),
        ("files_written", 2),
        ("state_written", 4),
        pytest.param("file_deleted", 4, marks=pytest.mark.slow),
    ],
)
def test_a_kill_during_a_save_loses_at_most_one_interval(tmp_path, stage, expected_step):
    model_dir = tmp_path / "run[1]"
    plant_user_files(model_dir)
    sibling = make_sibling(tmp_path)
    sibling_files = digest(sibling)
    saved, died = finish_child(start_child(model_dir, stage, save_number=3))
    assert saved == [0, 2] and died == (stage, 4)

    step = check_after_kill(model_dir, saved, died)
    assert step == expected_step

    est = estimator(model_dir, keep_max=1)
    est.train(train_input(), steps=2)
    assert step_of_latest(model_dir) == step + 2
    assert_state_names_existing_files(model_dir)
    assert len(user_files(model_dir)) == len(USER_FILES)
    assert digest(sibling) == sibling_files
    after = digest(model_dir)
    # The next save cleaned what the killed one left half-written.
    leftovers = [n for n in after if re.fullmatch(r"model\.ckpt-\d+_temp\.(index|data-.*)", n)]
    assert leftovers == []
    assert not [n for n in after if re.fullmatch(r"checkpoint\.tmp-\w+", n)]


@pytest.mark.slow
def test_random_kills_never_lose_progress(tmp_path):
    """Kill at random stages of random saves, restart each time, many times."""
    rng = random.Random(1234)
    model_dir = tmp_path / "run*"
    plant_user_files(model_dir)
    sibling = make_sibling(tmp_path, "run_sibling")
    sibling_files = digest(sibling)
    progress = deaths = 0
    for _ in range(12):
        stage = rng.choice(STAGES)
        save_number = rng.randint(2, 4)
        child = start_child(model_dir, stage, save_number, keep_max=rng.randint(1, 2),
                            max_steps=progress + 12)
        saved, died = finish_child(child)
        if died is None:
            step = step_of_latest(model_dir)
        else:
            step = check_after_kill(model_dir, saved, died)
            deaths += 1
        assert step >= progress
        progress = step
    assert deaths >= 8  # the loop did kill, mostly
    assert len(user_files(model_dir)) == len(USER_FILES)
    assert digest(sibling) == sibling_files


def test_each_stage_of_a_save_leaves_a_consistent_model_dir(tmp_path, monkeypatch):
    """In-process ledger: at every stage the state file names existing files."""
    seen = []

    def reached(stage):
        seen.append(stage)
        if stage != "temp_written":
            assert_state_names_existing_files(tmp_path)

    save_steps(tmp_path, [1])
    monkeypatch.setattr(_checkpoint, "_reached", reached)
    save_steps(tmp_path, [2, 3], max_to_keep=1)
    # Two index/data files deleted per dropped checkpoint, after the state file.
    assert seen == ["temp_written", "files_written", "state_written", "file_deleted",
                    "file_deleted"] * 2
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint", "model.ckpt-3.data-00000-of-00001", "model.ckpt-3.index"
    ]


# ---- deletion touches only the package's own files ---------------------------
@pytest.mark.parametrize("name", ["run[1]", "run*", "run?"])
def test_retention_deletes_only_its_own_files(tmp_path, name):
    model_dir = tmp_path / name
    plant_user_files(model_dir)
    sibling = make_sibling(tmp_path)
    before_sibling = digest(sibling)
    save_steps(model_dir, [1, 2, 3], max_to_keep=1)
    after = digest(model_dir)
    assert len(user_files(model_dir)) == len(USER_FILES)
    assert digest(sibling) == before_sibling
    assert sorted(n for n in after if re.fullmatch(r"model\.ckpt-\d+\.(index|data-.*)", n)) == [
        "model.ckpt-3.data-00000-of-00001", "model.ckpt-3.index"
    ]


def test_hostile_state_entries_delete_nothing_outside(tmp_path):
    """Entries like `*`, `../run1/...` or an absolute path elsewhere are dropped."""
    model_dir = tmp_path / "model"
    plant_user_files(model_dir)
    sibling = make_sibling(tmp_path)
    save_steps(model_dir, [1])
    before_sibling = digest(sibling)
    entries = ["*", "../run1/model.ckpt-2", str(sibling / "model.ckpt-4"), "model.ckpt-1"]
    (model_dir / "checkpoint").write_text(
        'model_checkpoint_path: "model.ckpt-1"\n'
        + "".join(f'all_model_checkpoint_paths: "{e}"\n' for e in entries)
    )
    save_steps(model_dir, [2, 3], max_to_keep=1)
    assert len(user_files(model_dir)) == len(USER_FILES)
    assert digest(sibling) == before_sibling
    assert [os.path.basename(p) for p in listed_paths(model_dir)] == ["model.ckpt-3"]


def test_stale_temp_files_are_removed_by_the_next_save(tmp_path, monkeypatch):
    held = tmp_path / "held"
    held.mkdir()
    model_dir = tmp_path / "model"

    def hold_temp_files(stage):
        if stage == "temp_written":
            for path in model_dir.glob("model.ckpt-1_temp*"):
                shutil.copy(path, held)

    monkeypatch.setattr(_checkpoint, "_reached", hold_temp_files)
    save_steps(model_dir, [1])
    # What a kill after SaveV2 leaves, plus TensorFlow's `.tempstate` files,
    # the data of a checkpoint whose deletion stopped after its index, and a
    # state file temp.
    stale = sorted(p.name for p in held.iterdir())
    assert stale == ["model.ckpt-1_temp.data-00000-of-00001", "model.ckpt-1_temp.index"]
    for path in held.iterdir():
        shutil.copy(path, model_dir)
    stale += ["model.ckpt-5.index.tempstate123456", "model.ckpt-9.data-00000-of-00001",
              "checkpoint.tmp-" + "0" * 32]
    for name in stale[2:]:
        (model_dir / name).write_bytes(os.urandom(64))
    plant_user_files(model_dir)
    save_steps(model_dir, [2])
    assert [n for n in stale if (model_dir / n).exists()] == []
    assert len(user_files(model_dir)) == len(USER_FILES)
    assert (model_dir / "model.ckpt-1.index").exists()


# ---- damaged or missing state --------------------------------------------------
@pytest.mark.parametrize(
    "content",
    [b"garbage that is no text proto\n", bytes(range(256)), b"",
     b'model_checkpoint_path: "model.ckpt-30\n'],
    ids=["text", "binary", "empty", "unterminated"],
)
def test_unreadable_state_file_is_rebuilt_from_the_checkpoints(tmp_path, content):
    save_steps(tmp_path, [10, 20, 30])
    (tmp_path / "checkpoint").write_bytes(content)
    with pytest.warns(UserWarning, match=r"Repaired .*checkpoint: it cannot be parsed"
                      r".*It now names model\.ckpt-30"):
        latest = _checkpoint.latest(str(tmp_path))
    assert latest == str(tmp_path / "model.ckpt-30")
    assert [os.path.basename(p) for p in listed_paths(tmp_path)] == ["model.ckpt-30"]
    assert_state_names_existing_files(tmp_path)


def test_missing_state_file_is_rebuilt(tmp_path):
    save_steps(tmp_path, [10, 20])
    (tmp_path / "checkpoint").unlink()
    with pytest.warns(UserWarning, match=r"it is missing\. It now names model\.ckpt-20"):
        assert _checkpoint.latest(str(tmp_path)) == str(tmp_path / "model.ckpt-20")
    assert_state_names_existing_files(tmp_path)


def test_state_file_naming_missing_files_falls_back_with_the_steps_lost(tmp_path):
    save_steps(tmp_path, [10, 20, 30])
    for path in tmp_path.glob("model.ckpt-30.*"):
        path.unlink()
    with pytest.warns(UserWarning, match=r"names 'model\.ckpt-30', whose files are not in "
                      r"model_dir\. It now names model\.ckpt-20, losing 10 steps"):
        assert _checkpoint.latest(str(tmp_path)) == str(tmp_path / "model.ckpt-20")
    assert [os.path.basename(p) for p in listed_paths(tmp_path)] == [
        "model.ckpt-10", "model.ckpt-20"
    ]


@pytest.mark.parametrize("part", ["index", "data-00000-of-00001"])
def test_truncated_newest_is_skipped_when_rebuilding(tmp_path, part):
    save_steps(tmp_path, [10, 20])
    damaged = tmp_path / f"model.ckpt-20.{part}"
    damaged.write_bytes(damaged.read_bytes()[:10])
    (tmp_path / "checkpoint").write_bytes(b"\x00\xff")
    with pytest.warns(UserWarning, match=r"It now names model\.ckpt-10\. Unreadable: "
                      r"model\.ckpt-20 \("):
        assert _checkpoint.latest(str(tmp_path)) == str(tmp_path / "model.ckpt-10")


def test_no_readable_checkpoint_is_refused_naming_the_files(tmp_path):
    save_steps(tmp_path, [10])
    data = tmp_path / "model.ckpt-10.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:5])
    (tmp_path / "checkpoint").unlink()
    pattern = re.escape(str(tmp_path / "model.ckpt-10")) + r" \(.*\)\. Move these files out"
    with pytest.raises(ValueError, match=pattern):
        _checkpoint.latest(str(tmp_path))


def test_a_file_as_model_dir_is_refused(tmp_path):
    model_dir = tmp_path / "model"
    model_dir.write_text("not a directory")
    with pytest.raises(ValueError, match=r"model_dir '.*model' is a file, not a directory"):
        _checkpoint.latest(str(model_dir))


# ---- the Estimator restarts from what is there ---------------------------------
@pytest.fixture(scope="module")
def trained_dir(tmp_path_factory):
    """A model_dir trained to step 6, checkpoints at 0, 2, 4, 6."""
    model_dir = tmp_path_factory.mktemp("trained") / "model"
    estimator(model_dir).train(train_input(), max_steps=6)
    return model_dir


def copy_of(trained_dir, tmp_path):
    target = tmp_path / "model"
    shutil.copytree(trained_dir, target)
    return target


def test_train_after_losing_the_newest_files_resumes_from_the_older(trained_dir, tmp_path):
    model_dir = copy_of(trained_dir, tmp_path)
    for path in model_dir.glob("model.ckpt-6.*"):
        path.unlink()
    kept = (model_dir / "model.ckpt-2.index").read_bytes()
    with pytest.warns(UserWarning, match=r"losing 2 steps"):
        estimator(model_dir).train(train_input(), steps=1)
    assert step_of_latest(model_dir) == 5
    assert (model_dir / "model.ckpt-2.index").read_bytes() == kept


def test_train_with_a_binary_state_file_resumes_from_the_newest(trained_dir, tmp_path):
    model_dir = copy_of(trained_dir, tmp_path)
    (model_dir / "checkpoint").write_bytes(b"\x80\x81\xfe\xff" * 8)
    with pytest.warns(UserWarning, match=r"cannot be parsed \(not UTF-8 text\)"):
        estimator(model_dir).train(train_input(), steps=1)
    assert step_of_latest(model_dir) == 7
    assert_state_names_existing_files(model_dir)


def test_train_with_a_truncated_newest_falls_back_saying_what_it_loses(trained_dir, tmp_path):
    model_dir = copy_of(trained_dir, tmp_path)
    data = model_dir / "model.ckpt-6.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:40])
    pattern = (re.escape(str(model_dir / "model.ckpt-6")) + r" is damaged .*"
               r"Training continues from model\.ckpt-4, losing 2 steps")
    with pytest.warns(UserWarning, match=pattern):
        estimator(model_dir).train(train_input(), steps=1)
    assert step_of_latest(model_dir) == 5


def test_evaluate_with_a_truncated_newest_is_refused_naming_it(trained_dir, tmp_path):
    model_dir = copy_of(trained_dir, tmp_path)
    index = model_dir / "model.ckpt-6.index"
    index.write_bytes(index.read_bytes()[:20])
    x, y = _models.make_data()
    with pytest.raises(ValueError, match=re.escape(str(model_dir / "model.ckpt-6"))
                       + r" is damaged and cannot be read"):
        estimator(model_dir).evaluate(_models.input_fn(x, y, repeat=False))
