"""evaluate() on a model_dir it cannot write: the metrics, and a warning.

tf.estimator 2.15 computed the metrics, then died with PermissionDeniedError
writing `eval/`, losing them. Here the metrics are returned and a warning
names the directory. A real read-only filesystem (a tmpfs remounted
read-only; root can write through chmod) when mounting is allowed, and a
writer that fails in any case.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.estimator import eval_summary
from tests import _models


def _estimator(model_dir):
    return ke.Estimator(_models.mlp_model_fn, model_dir=str(model_dir), params={"hidden": [4]})


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    model_dir = tmp_path_factory.mktemp("trained")
    x, y = _models.make_data()
    _estimator(model_dir).train(_models.input_fn(x, y), steps=5)
    metrics = _estimator(model_dir).evaluate(_models.input_fn(x, y, repeat=False))
    return model_dir, metrics


def _eval_input():
    x, y = _models.make_data()
    return _models.input_fn(x, y, repeat=False)


@pytest.fixture
def read_only_copy(trained, tmp_path):
    mount_point = tmp_path / "mnt"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount_point)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode()[:200]}")
    try:
        shutil.copytree(trained[0], mount_point / "model")
        subprocess.run(["mount", "-o", "remount,ro", str(mount_point)], check=True)
        yield mount_point / "model"
    finally:
        subprocess.run(["umount", str(mount_point)], check=True)


def test_evaluate_on_a_read_only_filesystem_returns_the_metrics(trained, read_only_copy):
    with pytest.warns(UserWarning, match=r"could not be written to .*model/eval"):
        metrics = _estimator(read_only_copy).evaluate(_eval_input())
    assert metrics == pytest.approx(trained[1])


def test_evaluate_whose_summary_writer_fails_returns_the_metrics(trained, tmp_path, monkeypatch):
    model_dir = tmp_path / "model"
    shutil.copytree(trained[0], model_dir)

    def failing_writer(directory, *args, **kwargs):
        raise tf.errors.PermissionDeniedError(None, None, f"{directory}; Read-only file system")

    # Where evaluate() opens its event file.
    monkeypatch.setattr(eval_summary, "_new_event_file", failing_writer)
    with pytest.warns(UserWarning, match=r"could not be written to .*model/eval.*Read-only"):
        metrics = _estimator(model_dir).evaluate(_eval_input(), name="holdout")
    assert metrics == pytest.approx(trained[1])
