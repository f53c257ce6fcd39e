"""train/evaluate/predict/export_saved_model under arbitrary arguments.

One Estimator trained for two steps serves every draw of the module. A call
either succeeds or raises ValueError / TypeError / NotImplementedError whose
message names the argument or the value received; never a TensorFlow error
from inside (NotFoundError, InvalidArgumentError), an AttributeError or
KeyError, never a hang. Explicit tests pin what tf.estimator 2.15 did with the
inputs the fuzz found handled differently.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import example, given
from hypothesis import strategies as st

import keras_estimator as ke
from tests.fuzz._bounded import succeeds_or_fails_clearly

X = np.arange(8, dtype=np.float32).reshape(8, 1) / 8.0


def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable(
        "w", [1, 1], initializer=tf.compat.v1.zeros_initializer()
    )
    pred = tf.matmul(features["x"], w)
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"p": pred, "q": pred * 2.0})
    loss = tf.reduce_mean(tf.square(pred - labels))
    step = tf.compat.v1.train.get_global_step()
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=step
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def finite_input():
    # Two batches, so every call ends even with steps=None.
    return tf.data.Dataset.from_tensor_slices(({"x": X}, X)).batch(4)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    estimator = ke.Estimator(model_fn, model_dir=str(tmp_path_factory.mktemp("fuzz")))
    estimator.train(finite_input, steps=2)
    return estimator


class _Hook(tf.compat.v1.train.SessionRunHook):
    pass


STEPS = st.one_of(
    st.none(),
    st.integers(min_value=-3, max_value=3),
    st.sampled_from([1.5, 2.0, "3", True, np.int64(2), np.float32(1.0), [1]]),
)
HOOKS = st.sampled_from(
    [None, [], (), [_Hook()], [object()], [None], object(), "hook", [_Hook, 1]]
)
CHECKPOINTS = st.sampled_from([None, "", 3, b"", "/nonexistent/model.ckpt-1"])
PREDICT_KEYS = st.one_of(
    st.none(),
    st.sampled_from(["p", "zz", 3, [3], ("q",)]),
    st.lists(st.sampled_from(["p", "q", "zz", ""]), max_size=3),
)


def _calls(estimator, method, steps, hooks, checkpoint):
    if method == "train":
        return lambda: estimator.train(finite_input, steps=steps, hooks=hooks)
    if method == "train max_steps":
        return lambda: estimator.train(finite_input, max_steps=steps, hooks=hooks)
    return lambda: estimator.evaluate(
        finite_input, steps=steps, hooks=hooks, checkpoint_path=checkpoint
    )


@given(
    st.sampled_from(["train", "train max_steps", "evaluate"]), STEPS, HOOKS, CHECKPOINTS
)
@example("evaluate", 1, None, "/nonexistent/model.ckpt-1")
def test_train_and_evaluate_run_or_raise_a_clear_error(
    trained, method, steps, hooks, checkpoint
):
    names = ["steps", "hook", "Hook", "checkpoint", str(steps), str(checkpoint)]
    succeeds_or_fails_clearly(_calls(trained, method, steps, hooks, checkpoint), names)


@given(PREDICT_KEYS, st.booleans(), HOOKS, CHECKPOINTS)
@example([], True, None, None)
@example(3, True, None, None)
@example(None, True, None, "/nonexistent/model.ckpt-1")
def test_predict_runs_or_raises_a_clear_error(
    trained, predict_keys, single, hooks, checkpoint
):
    def call():
        return list(
            trained.predict(
                finite_input,
                predict_keys=predict_keys,
                yield_single_examples=single,
                hooks=hooks,
                checkpoint_path=checkpoint,
            )
        )

    names = ["predict_keys", "hook", "Hook", "checkpoint", str(checkpoint)]
    succeeds_or_fails_clearly(call, names)


def _placeholder(dtype=tf.float32, shape=(None, 1)):
    return tf.compat.v1.placeholder(dtype, shape)


def _receiver(features_of):
    def fn():
        tensor = _placeholder()
        return ke.export.ServingInputReceiver(features_of(tensor), {"x": tensor})

    return fn


RECEIVER_FNS = {
    "good": _receiver(lambda t: {"x": t}),
    "raw builder": ke.export.build_raw_serving_input_receiver_fn(
        {"x": tf.zeros([1, 1])}
    ),
    "returns None": lambda: None,
    "returns dict": lambda: {"x": _placeholder()},
    "returns tensor": _placeholder,
    "returns int": lambda: 3,
    "returns pair": lambda: (None, None),
    "not callable": 3,
    "takes an argument": lambda batch: None,
}


@given(
    st.sampled_from(sorted(RECEIVER_FNS)),
    st.sampled_from([None, "", 3, "/nonexistent/model.ckpt-1"]),
    st.sampled_from([None, {}, 3, "assets"]),
)
@example("good", "/nonexistent/model.ckpt-1", None)
def test_export_saved_model_exports_or_raises_a_clear_error(
    trained, tmp_path, receiver, checkpoint, assets_extra
):
    def call():
        return trained.export_saved_model(
            str(tmp_path / "export"),
            RECEIVER_FNS[receiver],
            checkpoint_path=checkpoint,
            assets_extra=assets_extra,
        )

    names = ["serving_input_receiver_fn", "checkpoint", "assets_extra", str(checkpoint)]
    succeeds_or_fails_clearly(call, names)


@pytest.mark.parametrize("method", ["evaluate", "predict"])
def test_missing_checkpoint_path_raises_2_15s_value_error(trained, method):
    # tf.estimator 2.15: ValueError 'The passed save_path is not a valid
    # checkpoint: <path>' (from its Saver); this raised TensorFlow's
    # NotFoundError 'Unsuccessful TensorSliceReader constructor'.
    path = f"{trained.model_dir}/model.ckpt-999"
    with pytest.raises(
        ValueError, match=rf"^The passed save_path is not a valid checkpoint: {path}"
    ):
        if method == "evaluate":
            trained.evaluate(finite_input, checkpoint_path=path)
        else:
            next(trained.predict(finite_input, checkpoint_path=path))


def test_checkpoint_path_given_as_latest_prefix_still_evaluates(trained):
    latest = trained.latest_checkpoint()
    assert trained.evaluate(finite_input, checkpoint_path=latest)["global_step"] >= 2


@pytest.mark.parametrize(
    ("predict_keys", "keys"),
    [([], ["p", "q"]), ((), ["p", "q"]), (["p", "zz"], ["p"]), (["zz", "q"], ["q"])],
)
def test_predict_keys_select_as_2_15_did(trained, predict_keys, keys):
    # tf.estimator 2.15 returned every prediction for empty predict_keys and
    # passed over keys the predictions lack when another key named one;
    # these raised ValueError.
    rows = list(trained.predict(finite_input, predict_keys=predict_keys))
    assert len(rows) == 8
    assert sorted(rows[0]) == keys
    np.testing.assert_allclose(
        [row[keys[0]] for row in rows],
        [row[keys[0]] for row in trained.predict(finite_input)],
    )


def test_predict_keys_naming_no_prediction_raises_2_15s_phrase(trained):
    with pytest.raises(
        ValueError, match=r"^Expected to run at least one output from \['p', 'q'\]"
    ):
        next(trained.predict(finite_input, predict_keys=["zz"]))


def test_predict_keys_not_a_list_names_the_value(trained):
    with pytest.raises(
        TypeError, match=r"predict_keys must be a str or a list of str, got 3"
    ):
        next(trained.predict(finite_input, predict_keys=3))
