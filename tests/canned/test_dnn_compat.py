"""DNN estimators against model_dirs tf.estimator 2.15 wrote.

`tests/fixtures/make_tf215_dnn_fixture.py` trained each case on tf.estimator
2.15 and kept its checkpoints at steps 10 and 20, the predictions and the
evaluation at step 10, and the checkpoint's variable names. Here the same
estimator restores step 10, predicts and evaluates as 2.15 did, and trains
the same ordered batches to step 20, reproducing 2.15's checkpoint variable
by variable, optimizer slots and settings included.
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from tests.fixtures import make_tf215_dnn_fixture as recipe

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf215_dnn"
CASES = sorted(recipe.CASES)


def _estimator(case, model_dir):
    spec = dict(recipe.CASES[case])
    kind = spec.pop("kind")
    config = ke.RunConfig(tf_random_seed=3, save_checkpoints_steps=recipe.FIRST)
    return getattr(ke, kind)(
        feature_columns=recipe.columns(), model_dir=str(model_dir), config=config, **spec
    )


def _model_dir_at_first_checkpoint(case, tmp_path):
    model_dir = tmp_path / case
    shutil.copytree(FIXTURES / case, model_dir)
    (model_dir / "checkpoint").write_text(
        f'model_checkpoint_path: "model.ckpt-{recipe.FIRST}"\n'
        f'all_model_checkpoint_paths: "model.ckpt-{recipe.FIRST}"\n'
    )
    for stale in model_dir.glob(f"model.ckpt-{recipe.SECOND}.*"):
        stale.unlink()
    return model_dir


def _data(case):
    x, cls, target, weight = recipe.data()
    return x, recipe.labels_for(case, cls, target), weight


@pytest.mark.parametrize("case", CASES)
def test_variable_names_are_2_15s(case, tmp_path):
    x, y, weight = _data(case)
    est = _estimator(case, tmp_path / "fresh")
    est.train(
        lambda: tf.data.Dataset.from_tensor_slices((recipe.features(x, weight), y)).batch(8),
        steps=1,
    )
    ours = {name: shape for name, shape in tf.train.list_variables(est.model_dir)}
    theirs = json.loads((FIXTURES / f"{case}_variables.json").read_text())
    assert ours == theirs


@pytest.mark.parametrize("case", CASES)
def test_restored_predictions_and_evaluation_equal_2_15s(case, tmp_path):
    x, y, weight = _data(case)
    expected = np.load(FIXTURES / f"{case}_expected.npz")
    est = _estimator(case, _model_dir_at_first_checkpoint(case, tmp_path))
    predictions = list(
        est.predict(
            lambda: tf.data.Dataset.from_tensor_slices(
                recipe.features(x[:8], weight[:8])
            ).batch(8)
        )
    )
    keys = sorted(k[len("predict/") :] for k in expected.files if k.startswith("predict/"))
    assert sorted(predictions[0]) == keys
    for key in keys:
        ours = np.stack([p[key] for p in predictions])
        if ours.dtype.kind in "SOU":
            np.testing.assert_array_equal(ours, expected[f"predict/{key}"])
        else:
            np.testing.assert_allclose(ours, expected[f"predict/{key}"], rtol=1e-5, atol=1e-6)
    metrics = est.evaluate(
        lambda: tf.data.Dataset.from_tensor_slices((recipe.features(x, weight), y)).batch(16)
    )
    metric_keys = sorted(k[len("eval/") :] for k in expected.files if k.startswith("eval/"))
    assert sorted(metrics) == metric_keys
    for key in metric_keys:
        np.testing.assert_allclose(metrics[key], expected[f"eval/{key}"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", CASES)
def test_training_on_from_2_15s_checkpoint_reproduces_its_next_one(case, tmp_path):
    x, y, weight = _data(case)
    model_dir = _model_dir_at_first_checkpoint(case, tmp_path)
    est = _estimator(case, model_dir)
    # 2.15's second train() call read its input_fn from the start again.
    def batches():
        ds = tf.data.Dataset.from_tensor_slices((recipe.features(x, weight), y))
        return ds.batch(recipe.BATCH).repeat()

    est.train(batches, steps=recipe.SECOND - recipe.FIRST)
    ours = est.latest_checkpoint()
    assert ours.endswith(f"model.ckpt-{recipe.SECOND}")
    theirs = str(FIXTURES / case / f"model.ckpt-{recipe.SECOND}")
    names = [name for name, _ in tf.train.list_variables(theirs)]
    assert sorted(names) == sorted(name for name, _ in tf.train.list_variables(ours))
    for name in names:
        np.testing.assert_allclose(
            tf.train.load_variable(ours, name),
            tf.train.load_variable(theirs, name),
            rtol=1e-5,
            atol=1e-7,
            err_msg=name,
        )
