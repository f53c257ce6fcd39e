"""A DNNRegressor with dropout trains to tf.estimator 2.15's weights under tf_random_seed.

Its dropout masks come from random ops seeded by the graph seed: 2.15 drew
them from one sequence per train() call, begun again in each call. Here
they were drawn anew by each compiled step function, so the weights left
2.15's after the first step (hidden kernel [0, 2] 0.7756980 after 3 steps,
2.15: 0.7776702). 2.15's weights recorded by
`tests/fixtures/make_tf215_model_fn_random_ops_fixture.py`.
"""

from __future__ import annotations

import json

import numpy as np
import tensorflow as tf

import keras_estimator as ke
from tests.fixtures import make_tf215_model_fn_random_ops_fixture as recipe

EXPECTED = json.loads(recipe.OUT.read_text())["dnn_dropout"]


def test_dnn_regressor_with_dropout_trains_to_2_15s_weights(tmp_path):
    ours = recipe.dnn_dropout_weights(tf, ke, str(tmp_path))
    assert sorted(ours) == sorted(EXPECTED)
    for name, value in EXPECTED.items():
        np.testing.assert_allclose(ours[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
