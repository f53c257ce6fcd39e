"""Readers of another directory's checkpoints find them by exact name.

TensorFlow's `tf.train.latest_checkpoint` and `load_checkpoint` look files up
with a glob, so in a directory named like `run[1]` they find none (or, where
`run1` holds the same names, take those for its own). Warm starts (from a model_dir or a checkpoint), an export falling
back to the warm-start checkpoint, `keras_model_from_estimator` and
`keras-estimator inspect` read the directory they were given.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from tests import _models

_NAMES = ["run[1]", "run*", "run?"]


def _trained(model_dir, seed, steps=3):
    x, y = _models.make_data(seed=seed)
    estimator = ke.Estimator(
        _models.mlp_model_fn,
        model_dir=str(model_dir),
        params={"hidden": [4]},
        config=ke.RunConfig(tf_random_seed=seed),
    )
    estimator.train(_models.input_fn(x, y), steps=steps)
    return estimator


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """A model_dir per glob-like name, each beside a `run1` a glob would match."""
    root = tmp_path_factory.mktemp("dirs")
    decoy = _trained(root / "run1", seed=1, steps=5)
    wanted = {name: _trained(root / name, seed=2) for name in _NAMES}
    return root, decoy, wanted


def _kernel(source):
    return source.get_variable_value("dense/kernel")


@pytest.mark.parametrize("name", _NAMES)
@pytest.mark.parametrize("form", ["model_dir", "checkpoint", "settings"])
def test_warm_start_reads_the_directory_it_names(pair, tmp_path, name, form):
    root, decoy, wanted = pair
    source = {
        "model_dir": str(root / name),
        "checkpoint": wanted[name].latest_checkpoint(),
        "settings": ke.WarmStartSettings(str(root / name), vars_to_warm_start=".*kernel.*"),
    }[form]
    warm = ke.Estimator(
        _models.mlp_model_fn,
        model_dir=str(tmp_path / "warm"),
        params={"hidden": [4]},
        warm_start_from=source,
    )
    x, y = _models.make_data()
    # No step trained: the step-0 checkpoint holds the warm-started values.
    warm.train(_models.input_fn(x, y), steps=1, hooks=[])
    first = tf.train.load_checkpoint(str(tmp_path / "warm" / "model.ckpt-0"))
    np.testing.assert_array_equal(first.get_tensor("dense/kernel"), _kernel(wanted[name]))
    assert not np.array_equal(_kernel(wanted[name]), _kernel(decoy))


def test_reading_another_directory_never_rewrites_its_state_file(pair, tmp_path):
    root, _, wanted = pair
    source = tmp_path / "copy[1]"
    os.makedirs(source)
    for file in os.listdir(root / "run[1]"):
        if file.startswith("model.ckpt"):
            (source / file).write_bytes((root / "run[1]" / file).read_bytes())
    (source / "checkpoint").write_text("garbage\n")
    warm = ke.Estimator(
        _models.mlp_model_fn,
        model_dir=str(tmp_path / "warm"),
        params={"hidden": [4]},
        warm_start_from=str(source),
    )
    x, y = _models.make_data()
    with pytest.warns(UserWarning, match="cannot be parsed"):
        warm.train(_models.input_fn(x, y), steps=1)
    assert (source / "checkpoint").read_text() == "garbage\n"
    first = tf.train.load_checkpoint(str(tmp_path / "warm" / "model.ckpt-0"))
    np.testing.assert_array_equal(first.get_tensor("dense/kernel"), _kernel(wanted["run[1]"]))


@pytest.mark.parametrize("name", _NAMES)
def test_inspect_reads_the_directory_it_names(pair, name):
    from keras_estimator._src.cli import inspect_dir

    root, _, _ = pair
    report = inspect_dir.inspect_model_dir(str(root / name))
    # Was "cannot read model.ckpt-3": the glob found no file.
    assert report["problems"] == []
    assert report["global_step"] == 3
    assert "dense/kernel" in {v["name"] for v in report["variables"]}


def test_keras_model_from_estimator_reads_the_directory_it_names(tmp_path):
    import keras

    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input((4,), name="x"), keras.layers.Dense(3)])
    model.compile(
        optimizer=keras.optimizers.SGD(0.1),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=False,
    )
    estimator = ke.model_to_estimator(model, model_dir=str(tmp_path / "run[1]"))
    x, y = _models.make_data()
    estimator.train(_models.input_fn(x, y), steps=3)
    # Was NotFoundError: "Failed to find any matching files for .../run[1]/model.ckpt-3".
    trained = ke.keras_model_from_estimator(estimator)
    stored = [estimator.get_variable_value(n) for n in estimator.get_variable_names()]
    kernel, bias = trained.get_weights()
    assert not np.array_equal(kernel, model.get_weights()[0])  # trained, not initial
    assert any(v.shape == kernel.shape and np.array_equal(v, kernel) for v in stored)
    assert any(v.shape == bias.shape and np.array_equal(v, bias) for v in stored)
