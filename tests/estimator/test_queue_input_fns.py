"""Input_fns reading through TF1 queues train, evaluate and predict as in tf.estimator 2.15.

2.15 ran the queue runners an input_fn added in its session; called eagerly
here, such an input_fn failed with "QueueRunners are not supported when
eager execution is enabled" (`add_queue_runner`, `limit_epochs`) or "Input
pipelines based on Queues are not supported" (`tf.compat.v1.train.batch`).
2.15's results of the same recipe were recorded by
`tests/fixtures/make_tf215_queue_input_fixture.py`.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import tensorflow as tf

import keras_estimator as ke
from tests.fixtures import make_tf215_queue_input_fixture as recipe

EXPECTED = json.loads(recipe.OUT.read_text())


def test_queue_input_fns_give_2_15s_evaluations_and_predictions(tmp_path):
    """A FIFOQueue fed by add_queue_runner (training), the same behind
    limit_epochs (one epoch: the closed queue ends evaluation and
    prediction) and tf.compat.v1.train.batch: 2.15's loss 0.0111953 after
    20 steps and 0.0090140 after 5 more, and its 10 predictions."""
    ours = recipe.record(tf, ke, str(tmp_path))
    for key in ("evaluate", "evaluate_after_batch"):
        assert sorted(ours[key]) == sorted(EXPECTED[key])
        for metric, value in EXPECTED[key].items():
            np.testing.assert_allclose(ours[key][metric], value, rtol=1e-5, err_msg=metric)
    np.testing.assert_allclose(ours["predictions"], EXPECTED["predictions"], rtol=1e-5)
    # Every queue runner's thread stopped with its input.
    assert [t.name for t in threading.enumerate() if "QueueRunner" in t.name] == []
