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


def test_the_callers_random_state_is_left_as_it_was(tmp_path):
    """Seeding the input_fn does not reseed the program's own random ops."""
    tf.random.set_seed(123)
    expected = [float(tf.random.uniform([])) for _ in range(2)]
    tf.random.set_seed(123)
    first = float(tf.random.uniform([]))
    config = estimator.RunConfig(model_dir=str(tmp_path), tf_random_seed=FIXTURE["seed"])
    est = estimator.Estimator(recipes.model_fn_for(tf, estimator), config=config)
    list(est.predict(recipes.input_fns(tf)["unseeded"], yield_single_examples=False))
    assert [first, float(tf.random.uniform([]))] == expected
