"""A NaN loss at any step of a fused run stops training at that step.

tf.estimator checked the loss after every step. Here steps run fused, many
per call; a flag kept inside the loop reports the first NaN step of a run
before any hook (the checkpoint saver among them) sees the run.
"""

import logging
import re

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator.compat import layers
from tests._models import input_fn, make_data

X, Y = make_data()


def nan_at_model_fn(features, labels, mode, params):
    """A loss that is NaN in exactly one step: the one starting at `nan_at`."""
    logits = layers.dense(features["x"], 3)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    step = tf.compat.v1.train.get_global_step()
    loss = tf.where(tf.equal(step, params["nan_at"]), tf.constant(np.nan), loss)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
        loss, global_step=step
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


@given(nan_at=st.integers(0, 38), save_every=st.sampled_from([10, 25, 1000]))
def test_nan_at_any_step_of_a_fused_run_is_reported_at_that_step(
    tmp_path_factory, caplog, nan_at, save_every
):
    model_dir = str(tmp_path_factory.mktemp("nan"))
    config = ke.RunConfig(save_checkpoints_steps=save_every, log_step_count_steps=1000)
    est = ke.Estimator(
        nan_at_model_fn, model_dir=model_dir, config=config, params={"nan_at": nan_at}
    )
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="keras_estimator"):
        with pytest.raises(ke.NanLossDuringTrainingError):
            est.train(input_fn(X, Y), steps=40)
    # The step that computed the NaN loss advanced the global step to nan_at + 1.
    assert f"loss = NaN at step {nan_at + 1}." in caplog.text
    # Nothing was saved from that step on: the newest checkpoint is older.
    saved = ke.Estimator(nan_at_model_fn, model_dir=model_dir, params={"nan_at": -1})
    newest = saved.get_variable_value("global_step")
    assert newest <= nan_at
    assert newest == (nan_at // save_every) * save_every


def test_a_finite_loss_never_reports_nan(tmp_path):
    est = ke.Estimator(nan_at_model_fn, model_dir=str(tmp_path), params={"nan_at": -5})
    est.train(input_fn(X, Y), steps=30)
    assert est.get_variable_value("global_step") == 30
    assert tf.math.is_finite(est.get_variable_value("dense/kernel")).numpy().all()


def test_nan_inside_a_parameter_server_chunk_is_reported_at_its_step(tmp_path):
    # Workers run chunks of many steps; the NaN at step 40 sits inside the
    # first run (the logging hook plans runs of 50 steps). One worker: with
    # two, the other moves the global step while the NaN step runs, by as
    # many steps as the machine's load lets it, so no bound would hold.
    from tests.integration.test_parameter_server import _checkpoint_steps, _run_cluster

    result, cluster, model_dir = _run_cluster(
        tmp_path, "--model", "nan_at_40", "--steps", "200", num_workers=1
    )
    assert result["error"]["type"] == "NanLossDuringTrainingError"
    # The step the NaN step ran at, not the run's last (50).
    found = re.search(r"loss = NaN at step (\d+)\.", cluster.log("chief"))
    assert found and int(found.group(1)) == 40, cluster.log("chief")[-3000:]
    assert _checkpoint_steps(model_dir) == [0]
