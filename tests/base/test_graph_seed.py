"""Inside model_fn the graph's seed is RunConfig.tf_random_seed, as in 2.15."""

from __future__ import annotations

import tensorflow as tf

import keras_estimator as ke


def _recording_model_fn(seen):
    def model_fn(features, labels, mode):
        seen.append((mode, tf.compat.v1.get_default_graph().seed))
        w = tf.compat.v1.get_variable(
            "w", [], initializer=tf.compat.v1.zeros_initializer()
        )
        step = tf.compat.v1.train.get_or_create_global_step()
        return ke.EstimatorSpec(
            mode,
            loss=tf.reduce_sum(features["x"]) * w,
            train_op=tf.compat.v1.assign_add(step, 1),
            predictions={"y": features["x"]},
        )

    return model_fn


def _input_fn():
    return {"x": tf.ones([2, 1])}, tf.ones([2, 1])


def test_graph_seed_is_the_run_config_seed_in_every_mode(tmp_path):
    seen = []
    est = ke.Estimator(
        _recording_model_fn(seen),
        model_dir=str(tmp_path),
        config=ke.RunConfig(tf_random_seed=42),
    )
    est.evaluate(_input_fn, steps=1)
    next(est.predict(_input_fn))
    est.train(_input_fn, steps=1)
    assert {mode for mode, _ in seen} == {"train", "eval", "infer"}
    assert all(seed == 42 for _, seed in seen), seen


def test_unseeded_estimator_does_not_inherit_another_ones_seed(tmp_path):
    seeded = ke.Estimator(
        _recording_model_fn([]),
        model_dir=str(tmp_path / "a"),
        config=ke.RunConfig(tf_random_seed=7),
    )
    seeded.train(_input_fn, steps=1)
    seen = []
    ke.Estimator(_recording_model_fn(seen), model_dir=str(tmp_path / "b")).train(
        _input_fn, steps=1
    )
    assert seen and all(seed is None for _, seed in seen), seen
