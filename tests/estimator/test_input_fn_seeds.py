"""An input_fn's random ops are seeded from RunConfig.tf_random_seed, as in 2.15.

tf.estimator 2.15 called the input_fn in a graph seeded with tf_random_seed:
the order a seeded program's data came in, shuffled with or without an op
seed, was fixed by that seed. The expected values are 2.15's, recorded by
`tests/fixtures/make_tf215_input_seeds_fixture.py`, which this file reuses
for the recipes (input_fns, model_fn, the recording hook).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as estimator
from tests.fixtures import make_tf215_input_seeds_fixture as recipes
from tests.fixtures import make_tf215_input_seeds_repeated_fixture as repeated_recipes

FIXTURE = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "tf215_input_seeds.json").read_text()
)


@pytest.mark.parametrize("mode", ["train", "evaluate", "predict"])
@pytest.mark.parametrize("name", sorted(FIXTURE["results"]))
def test_input_fn_random_ops_follow_2_15s_graph_seed(tmp_path, name, mode):
    input_fn = recipes.input_fns(tf)[name]
    config = estimator.RunConfig(model_dir=str(tmp_path), tf_random_seed=FIXTURE["seed"])
    est = estimator.Estimator(recipes.model_fn_for(tf, estimator), config=config)
    if mode != "train":
        est.train(input_fn, steps=1)
    seen = recipes.seen_in(tf, estimator, est, input_fn, mode)
    np.testing.assert_allclose(seen, FIXTURE["results"][name][mode], rtol=1e-6)


@pytest.mark.parametrize("input_fn_name", ["unseeded", "eager_uniform"])
def test_the_callers_random_state_is_left_as_it_was(tmp_path, input_fn_name):
    """Seeding the input_fn does not reseed the program's own random ops."""
    input_fn = {**recipes.input_fns(tf), **repeated_recipes.input_fns(tf)}[input_fn_name]
    tf.random.set_seed(123)
    expected = [float(tf.random.uniform([])) for _ in range(3)]
    tf.random.set_seed(123)
    seen = [float(tf.random.uniform([]))]
    config = estimator.RunConfig(model_dir=str(tmp_path), tf_random_seed=FIXTURE["seed"])
    est = estimator.Estimator(recipes.model_fn_for(tf, estimator), config=config)
    for _ in range(2):  # the second call restarts the input_fn's eager op
        list(est.predict(input_fn, yield_single_examples=False))
        seen.append(float(tf.random.uniform([])))
    assert seen == expected


REPEATED = json.loads(
    (
        Path(__file__).resolve().parents[1] / "fixtures" / "tf215_input_seeds_repeated.json"
    ).read_text()
)


@pytest.mark.parametrize("mode", repeated_recipes.MODES)
@pytest.mark.parametrize("case", sorted(REPEATED["results"]))
def test_input_fn_random_ops_begin_again_on_every_call_as_in_2_15(case, mode):
    # 2.15 called the input_fn in a new graph per call: its random ops gave
    # the same values on every call; here the second call's eager op (or
    # the map function's) went on with the first call's sequence.
    name, seed = case.split(" seed=")
    # The program's global seed (conftest's) is not 2.15's input_fn graph's.
    tf.random.set_seed(7)
    try:
        calls = repeated_recipes.two_calls(
            tf, estimator, name, None if seed == "None" else int(seed), mode
        )
    finally:
        tf.random.set_seed(0)  # conftest's
    np.testing.assert_allclose(calls, REPEATED["results"][case][mode], rtol=1e-6)


def test_without_tf_random_seed_an_op_seed_ignores_the_programs_global_seed(tmp_path):
    # 2.15's unseeded graph gave an op seed s the pair (87654321, s) whatever
    # the program's global seed; the eager input_fn took the program's (7, s).
    tf.random.set_seed(7)
    try:
        est = estimator.Estimator(
            recipes.model_fn_for(tf, estimator), config=estimator.RunConfig(str(tmp_path))
        )
        input_fn = repeated_recipes.input_fns(tf)["eager_normal_op_seeded"]
        est.train(input_fn, steps=1)
        seen = recipes.seen_in(tf, estimator, est, input_fn, "predict")
        the_programs = tf.random.normal([recipes.STEPS * recipes.BATCH], seed=3).numpy()
    finally:
        tf.random.set_seed(0)  # conftest's
    tf215 = REPEATED["results"]["eager_normal_op_seeded seed=None"]["predict"][0]
    np.testing.assert_allclose(seen, tf215, rtol=1e-6)
    assert not np.allclose(seen, the_programs)
