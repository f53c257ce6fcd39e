"""Properties of training, resuming and checkpointing over random small MLPs."""

import tempfile
from pathlib import Path

import numpy as np
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from tests._models import forward, make_data, mlp_model_fn

mlp_params = st.fixed_dictionaries(
    {
        "hidden": st.lists(st.integers(2, 8), min_size=1, max_size=2),
        "optimizer": st.sampled_from(["adam", "sgd", "adagrad"]),
        "learning_rate": st.sampled_from([0.01, 0.1]),
    }
)


def periodic_input_fn(x, y, batch_size, period):
    """Batches that repeat every `period` steps, whenever input_fn is called."""
    rows = batch_size * period

    def fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": x[:rows]}, y[:rows]))
        return data.repeat().batch(batch_size)

    return fn


def make(model_dir, params, **config):
    return ke.Estimator(
        mlp_model_fn,
        model_dir=str(model_dir),
        params=params,
        config=ke.RunConfig(tf_random_seed=3, **config),
    )


def all_weights(estimator):
    return {n: estimator.get_variable_value(n) for n in estimator.get_variable_names()}


@given(
    params=mlp_params,
    batch_size=st.integers(1, 8),
    period=st.integers(1, 2),
    repeats=st.integers(1, 4),
)
def test_resume_equals_uninterrupted_training(params, batch_size, period, repeats):
    steps = period * repeats
    x, y = make_data(num_examples=16)
    input_fn = periodic_input_fn(x, y, batch_size, period)
    with tempfile.TemporaryDirectory() as split, tempfile.TemporaryDirectory() as whole:
        make(split, params).train(input_fn, steps=steps)
        resumed = make(split, params)
        resumed.train(input_fn, steps=steps)
        straight = make(whole, params)
        straight.train(input_fn, steps=2 * steps)

        # (b) the global step counts the steps trained.
        assert resumed.get_variable_value("global_step") == 2 * steps
        assert straight.get_variable_value("global_step") == 2 * steps
        # (a) same weights and optimizer state, bit for bit.
        split_weights, whole_weights = all_weights(resumed), all_weights(straight)
        assert split_weights.keys() == whole_weights.keys()
        for name in split_weights:
            np.testing.assert_array_equal(split_weights[name], whole_weights[name], name)


@given(params=mlp_params, batch_size=st.integers(1, 16), steps=st.integers(1, 5))
def test_evaluate_and_predict_match_forward_pass(params, batch_size, steps):
    x, y = make_data(num_examples=20)
    with tempfile.TemporaryDirectory() as model_dir:
        make(model_dir, params).train(periodic_input_fn(x, y, 4, 1), steps=steps)
        # (c) a fresh Estimator restores the weights and computes the same thing.
        est = make(model_dir, params)
        logits = forward(est, x, params["hidden"])

        def eval_input_fn():
            return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(batch_size)

        predictions = list(est.predict(eval_input_fn))
        np.testing.assert_allclose(
            np.stack([p["logits"] for p in predictions]), logits, rtol=1e-4, atol=1e-5
        )
        metrics = est.evaluate(eval_input_fn)
        assert abs(metrics["accuracy"] - np.mean(logits.argmax(1) == y)) < 1e-6
        shifted = logits - logits.max(1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
        per_example = -log_probs[np.arange(len(y)), y]
        batch_losses = [
            per_example[i : i + batch_size].mean() for i in range(0, len(y), batch_size)
        ]
        assert abs(metrics["loss"] - np.mean(batch_losses)) < 1e-4
        assert metrics["global_step"] == steps


@given(
    save_steps=st.integers(1, 4),
    keep_max=st.integers(1, 4),
    calls=st.lists(st.integers(1, 6), min_size=1, max_size=3),
)
def test_state_file_names_only_existing_checkpoints(save_steps, keep_max, calls):
    x, y = make_data(num_examples=8)
    with tempfile.TemporaryDirectory() as model_dir:
        for steps in calls:
            make(
                model_dir,
                {"hidden": [2]},
                save_checkpoints_steps=save_steps,
                keep_checkpoint_max=keep_max,
            ).train(periodic_input_fn(x, y, 4, 1), steps=steps)
            # (d) the state file lists existing checkpoints, at most keep_max.
            state = tf.train.get_checkpoint_state(model_dir)
            listed = list(state.all_model_checkpoint_paths)
            assert 1 <= len(listed) <= keep_max
            assert listed[-1] == state.model_checkpoint_path
            for prefix in listed:
                assert Path(prefix + ".index").exists(), prefix
            on_disk = {p.name[: -len(".index")] for p in Path(model_dir).glob("*.index")}
            assert on_disk == {Path(p).name for p in listed}
        assert state.model_checkpoint_path.endswith(f"model.ckpt-{sum(calls)}")
