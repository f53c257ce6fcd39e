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
    events = EventAccumulator(
        str(directory), size_guidance={"tensors": 0, "scalars": 0, "histograms": 0}
    )
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
    # Summaries are labelled with the step after the one computing them, as
    # tf.estimator 2.15 labelled them (its run of this program: 1, 11, 21).
    # The loss is a TF1 simple value, as 2.15 wrote it; model_fn's TF2
    # summaries are tensor events.
    assert [e.step for e in events.Scalars("loss")] == [1, 11, 21]
    assert "loss" not in tags["tensors"]
    assert tensor_steps(events, "v2_mean_feature") == [1, 11, 21]
    # TF1 summaries are written as 2.15 wrote them: simple values and
    # histogram protos.
    assert [e.step for e in events.Scalars("v1_loss_copy")] == [1, 11, 21]
    assert [e.step for e in events.Histograms("v1_features")] == [1, 11, 21]
    assert "v1_features" in tags["histograms"]
    # The loss written is the loss of the step at that global step.
    v1 = [e.value for e in events.Scalars("v1_loss_copy")]
    loss = [e.value for e in events.Scalars("loss")]
    np.testing.assert_allclose(v1, loss, rtol=1e-6)
    # global_step/sec from the step counter, as tf.estimator wrote it (a
    # simple value, which this reader keeps apart from tensors).
    assert [e.step for e in events.Scalars("global_step/sec")] == [11, 21]


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
    # tf.estimator 2.15 wrote this program's losses at 1, 6, 8, 13.
    assert sorted(e.step for e in load(tmp_path).Scalars("loss")) == [1, 6, 8, 13]


def test_no_summaries_when_disabled(tmp_path):
    est = ke.Estimator(
        summarising_model_fn,
        model_dir=str(tmp_path),
        params={"hidden": [4]},
        config=ke.RunConfig(save_summary_steps=0, log_step_count_steps=None),
    )
    est.train(input_fn(X, Y), steps=5)
    tags = load(tmp_path).Tags()
    assert "loss" not in tags["scalars"] + tags["tensors"]


def test_eval_metrics_in_eval_dirs(tmp_path):
    est = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path), params={"hidden": [4]})
    est.train(input_fn(X, Y), steps=3)
    results = est.evaluate(input_fn(X, Y, repeat=False))
    named = est.evaluate(input_fn(X, Y, repeat=False), name="holdout")
    for directory, expected in ((tmp_path / "eval", results), (tmp_path / "eval_holdout", named)):
        events = load(directory)
        # Simple values, as 2.15 wrote them.
        assert [e.step for e in events.Scalars("accuracy")] == [3]
        value = events.Scalars("accuracy")[0].value
        assert abs(value - expected["accuracy"]) < 1e-6


def _free_port():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get_json(url, deadline):
    import json
    import time
    import urllib.error
    import urllib.request

    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, ConnectionError, OSError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_tensorboard_serves_the_curves(tmp_path):
    """`tensorboard --logdir model_dir` (on 127.0.0.1) lists and serves the
    training loss, global_step/sec, model_fn summaries and eval metrics."""
    import os
    import subprocess
    import sys
    import time

    est = ke.Estimator(
        summarising_model_fn,
        model_dir=str(tmp_path),
        params={"hidden": [4]},
        config=ke.RunConfig(save_summary_steps=10, log_step_count_steps=10),
    )
    est.train(input_fn(X, Y), steps=25)
    est.evaluate(input_fn(X, Y, repeat=False))
    port = _free_port()
    tensorboard = os.path.join(os.path.dirname(sys.executable), "tensorboard")
    server = subprocess.Popen(
        [tensorboard, "--logdir", str(tmp_path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}/data/plugin/scalars"
        deadline = time.monotonic() + 90
        tags = _get_json(f"{base}/tags", deadline)
        while "eval" not in tags and time.monotonic() < deadline:
            time.sleep(0.5)  # TensorBoard loads runs in the background
            tags = _get_json(f"{base}/tags", deadline)
        assert {"loss", "global_step/sec", "v2_mean_feature", "v1_loss_copy"} <= set(tags["."])
        assert {"accuracy", "loss"} <= set(tags["eval"])
        loss = _get_json(f"{base}/scalars?run=.&tag=loss", deadline)
        assert [step for _, step, _ in loss] == [1, 11, 21]
        accuracy = _get_json(f"{base}/scalars?run=eval&tag=accuracy", deadline)
        assert [step for _, step, _ in accuracy] == [25]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_summary_values_are_the_steps_before_labelled_as_2_15(tmp_path):
    """2.15 (this model_fn, GradientDescent(0.1), save_summary_steps=5) wrote
    sum|w| = 0.0, 0.676037, 1.202761 and loss 1.098612, 0.982869, 0.772067 at
    steps 1, 6, 11: the values the run computed, before its update."""

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [4, 3], initializer=tf.compat.v1.zeros_initializer())
        logits = tf.matmul(features["x"], w)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        tf.compat.v1.summary.scalar("wabs", tf.reduce_sum(tf.abs(w)))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 4)).astype("float32")
    y = (x[:, 0] > 0).astype("int32")

    def data():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(8).repeat()

    est = ke.Estimator(
        model_fn, model_dir=str(tmp_path), config=ke.RunConfig(save_summary_steps=5)
    )
    est.train(data, steps=12)
    events = load(tmp_path)
    for tag, expected in (
        ("wabs", [0.0, 0.676037, 1.202761]),
        ("loss", [1.098612, 0.982869, 0.772067]),
    ):
        # A TF1 summary and the loss: simple values, as in 2.15.
        steps = [e.step for e in events.Scalars(tag)]
        values = [e.value for e in events.Scalars(tag)]
        assert steps == [1, 6, 11]
        np.testing.assert_allclose(values, expected, atol=2e-6)
