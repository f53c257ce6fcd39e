"""Variables hooks make in begin() are checkpointed and restored as tf.estimator 2.15 did.

2.15's Saver held every global variable of the call's graph, so a counter a
hook made with `tf.compat.v1.get_variable` or `tf.Variable` was in
`model.ckpt`, restored by the next train/evaluate/predict (also of a new
Estimator), and listed by `get_variable_names`. The program and 2.15's
results come from `tests/fixtures/make_tf215_hook_variables_fixture.py`.
"""

import json
import pathlib

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from tests.fixtures import make_tf215_hook_variables_fixture as program

FIXTURE = pathlib.Path(__file__).parents[1] / "fixtures" / "tf215_hook_variables.json"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    expected = json.loads(FIXTURE.read_text())
    got = program.run_program(ke, str(tmp_path_factory.mktemp("hook_variables")))
    return expected, got


def test_hook_variables_are_in_every_checkpoint_of_the_call(runs):
    expected, got = runs
    # 2.15: global_step, runs, tv_runs, w with runs 3.0 and tv_runs 16.0.
    # Here the checkpoint held global_step and w alone.
    assert got["checkpoint_1"] == expected["checkpoint_1"]
    assert got["checkpoint_2"] == expected["checkpoint_2"]
    assert got["variable_names"] == expected["variable_names"]
    assert got["variable_values"] == pytest.approx(expected["variable_values"])


def test_a_new_estimator_restores_them_and_local_ones_start_again(runs):
    expected, got = runs
    # 2.15: [4, 5], [18, 20] (restored), [1, 2] (local); here they started
    # from their initializers: [1, 2], [12, 14].
    assert got["train_1"] == expected["train_1"]
    assert got["train_2"] == expected["train_2"]


def test_evaluate_and_predict_restore_them_from_the_checkpoint(runs):
    expected, got = runs
    assert got["evaluate"] == expected["evaluate"]  # [4, 5]; was [1, 2]
    assert got["predict"] == expected["predict"]


def test_a_call_without_the_hooks_writes_none_of_them(runs):
    expected, got = runs
    assert got["checkpoint_without_hooks"] == expected["checkpoint_without_hooks"]


def test_repeated_names_are_numbered_as_a_tf1_graph_numbered_them(runs):
    expected, got = runs
    # A hook's tf.Variable named "w" is w_1 beside the model's w; two named
    # "dup" are dup and dup_1.
    assert got["checkpoint_repeated"] == expected["checkpoint_repeated"]
    np.testing.assert_allclose(got["repeated_w"], expected["repeated_w"], rtol=1e-6)


def test_a_checkpoint_without_them_leaves_them_at_their_values(tmp_path):
    """2.15 raised NotFoundError here; they keep their values instead."""
    model_fn = program.make_model_fn(ke)
    ke.Estimator(model_fn, model_dir=str(tmp_path)).train(program.input_fn, steps=2)
    hook = program.GetVariable()
    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(program.input_fn, steps=2, hooks=[hook])
    assert hook.seen == [1.0, 2.0]
    reader = tf.train.load_checkpoint(str(tmp_path))
    assert reader.get_tensor("runs") == 2.0
    assert reader.get_tensor("global_step") == 4
