"""Summaries from model_fn land in model_dir at the right steps (read by TensorBoard)."""

import numpy as np
import tensorflow as tf
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn

X, Y = make_data()


def summarising_model_fn(features, labels, mode, params):
    spec = mlp_model_fn(features, labels, mode, params)
    if mode == ke.ModeKeys.TRAIN:
        tf.summary.scalar("v2_mean_feature", tf.reduce_mean(features["x"]))
        tf.compat.v1.summary.scalar("v1_loss_copy", spec.loss)
        tf.compat.v1.summary.histogram("v1_features", features["x"])
    return spec


def load(directory):
    events = EventAccumulator(str(directory), size_guidance={"tensors": 0, "scalars": 0})
    events.Reload()
    return events


def tensor_steps(events, tag):
    return [e.step for e in events.Tensors(tag)]


def test_summaries_every_save_summary_steps(tmp_path):
    est = ke.Estimator(
        summarising_model_fn,
        model_dir=str(tmp_path),
        params={"hidden": [4]},
        config=ke.RunConfig(save_summary_steps=10, log_step_count_steps=10),
    )
    est.train(input_fn(X, Y), steps=25)
    events = load(tmp_path)
    tags = events.Tags()
    # TF2 summaries (loss, model_fn's tf.summary) are tensor events.
    assert tensor_steps(events, "loss") == [0, 10, 20]
    assert tensor_steps(events, "v2_mean_feature") == [0, 10, 20]
    # TF1 summaries (simple values, histograms), as TensorBoard's reader
    # migrates them to tensors with their plugin (scalars, histograms).
    assert tensor_steps(events, "v1_loss_copy") == [0, 10, 20]
    assert "v1_features" in tags["tensors"]
    plugin = events.SummaryMetadata("v1_features").plugin_data.plugin_name
    assert plugin == "histograms"
    # The loss written is the loss of the step at that global step.
    v1 = [float(tf.make_ndarray(e.tensor_proto)) for e in events.Tensors("v1_loss_copy")]
    v2 = [float(tf.make_ndarray(e.tensor_proto)) for e in events.Tensors("loss")]
    np.testing.assert_allclose(v1, v2, rtol=1e-6)
    # global_step/sec from the step counter, as tf.estimator wrote it.
    assert tensor_steps(events, "global_step/sec") == [11, 21]


def test_summaries_continue_after_resume(tmp_path):
    def make():
        return ke.Estimator(
            summarising_model_fn,
            model_dir=str(tmp_path),
            params={"hidden": [4]},
            config=ke.RunConfig(save_summary_steps=5),
        )

    make().train(input_fn(X, Y), steps=7)
    make().train(input_fn(X, Y), steps=7)
    assert sorted(tensor_steps(load(tmp_path), "loss")) == [0, 5, 7, 12]


def test_no_summaries_when_disabled(tmp_path):
    est = ke.Estimator(
        summarising_model_fn,
        model_dir=str(tmp_path),
        params={"hidden": [4]},
        config=ke.RunConfig(save_summary_steps=0, log_step_count_steps=None),
    )
    est.train(input_fn(X, Y), steps=5)
    assert "loss" not in load(tmp_path).Tags()["tensors"]


def test_eval_metrics_in_eval_dirs(tmp_path):
    est = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path), params={"hidden": [4]})
    est.train(input_fn(X, Y), steps=3)
    results = est.evaluate(input_fn(X, Y, repeat=False))
    named = est.evaluate(input_fn(X, Y, repeat=False), name="holdout")
    for directory, expected in ((tmp_path / "eval", results), (tmp_path / "eval_holdout", named)):
        events = load(directory)
        assert tensor_steps(events, "accuracy") == [3]
        value = float(tf.make_ndarray(events.Tensors("accuracy")[0].tensor_proto))
        assert abs(value - expected["accuracy"]) < 1e-6
