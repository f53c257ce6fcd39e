"""`Scaffold(init_fn=...)`, run once on a fresh start, as 2.15 ran it.

tf.estimator 2.15 called `init_fn(scaffold, session)` when a call found no
checkpoint in model_dir, after the initializers ran; fine-tuning programs
restore a pretrained checkpoint there with a `tf.compat.v1.train.Saver`
made in the model_fn. The expected figures are tf.estimator 2.15's
(tensorflow-cpu 2.15.1, tensorflow-estimator 2.15.0), run on this module's
program (`_one_unit_dense.py`): a one-unit dense layer starting at kernel
0.5, bias 0.25, trained 3 steps of gradient descent (0.1) on y = 3x + 1 into
checkpoint A; a second Estimator whose init_fn restores only the kernel
from A.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator
from tests.estimator._one_unit_dense import input_fn as _input_fn
from tests.estimator._one_unit_dense import model_fn_from, train_checkpoint_a
from tests.estimator._one_unit_dense import weights as _weights

v1 = tf.compat.v1

# 2.15: the prediction for x = 1 on a fresh model_dir (A's kernel, the
# initial bias); kernel and bias after 10 and 20 steps from there, and the
# loss evaluate() gives on 4 batches after 20.
_PREDICTED_FRESH = 1.0221856
_AFTER_10 = (1.9541095, 0.8188249)
_AFTER_20 = (2.5233037, 0.932639)
_LOSS_AFTER_20 = 0.085170805


def _one_example():
    return tf.data.Dataset.from_tensors({"x": [[1.0]]})


@pytest.fixture(scope="module")
def checkpoint_a(tmp_path_factory):
    return train_checkpoint_a(str(tmp_path_factory.mktemp("a")))


def _restoring_the_kernel_from(checkpoint_dir, calls, as_dict):
    def init_fn_of(mode):
        (kernel,) = [v for v in v1.global_variables() if v.name == "out/kernel:0"]
        saver = v1.train.Saver({"out/kernel": kernel} if as_dict else [kernel])

        def init_fn(scaffold, session):
            assert isinstance(scaffold, v1.train.Scaffold)
            calls.append(mode)
            saver.restore(session, tf.train.latest_checkpoint(checkpoint_dir))

        return init_fn

    return init_fn_of


@pytest.mark.parametrize("as_dict", [False, True], ids=["list", "dict"])
def test_init_fn_restoring_a_pretrained_kernel_gives_2_15s_training(
    checkpoint_a, tmp_path, as_dict
):
    calls = []
    est = keras_estimator.Estimator(
        model_fn_from(init_fn_of=_restoring_the_kernel_from(checkpoint_a, calls, as_dict)), str(tmp_path)
    )
    prediction = next(est.predict(_one_example))
    assert float(np.ravel(prediction)[0]) == pytest.approx(_PREDICTED_FRESH, rel=1e-6)
    est.train(_input_fn, steps=10)
    np.testing.assert_allclose(_weights(est), _AFTER_10, rtol=1e-5)
    # model_dir's checkpoint wins from now on: init_fn is not called again.
    est.train(_input_fn, steps=10)
    np.testing.assert_allclose(_weights(est), _AFTER_20, rtol=1e-5)
    assert est.evaluate(_input_fn, steps=4)["loss"] == pytest.approx(_LOSS_AFTER_20, rel=1e-5)
    assert calls == [keras_estimator.ModeKeys.PREDICT, keras_estimator.ModeKeys.TRAIN]


def test_init_fn_is_called_once_by_train_as_in_2_15s_own_test(tmp_path):
    # tf.estimator 2.15's estimator_test.py, test_scaffold_is_used.
    calls = []

    def init_fn_of(mode):
        return lambda scaffold, session: calls.append((mode, scaffold is not None))

    est = keras_estimator.Estimator(model_fn_from(init_fn_of=init_fn_of), str(tmp_path))
    est.train(_input_fn, steps=1)
    assert calls == [(keras_estimator.ModeKeys.TRAIN, True)]


def test_init_fn_session_returns_eager_values_and_assignments_hold(tmp_path):
    seen = []

    def init_fn_of(mode):
        (bias,) = [v for v in v1.global_variables() if v.name == "out/bias:0"]

        def init_fn(scaffold, session):
            seen.append(session.run([bias.assign([2.0]), None]))

        return init_fn

    est = keras_estimator.Estimator(model_fn_from(init_fn_of=init_fn_of), str(tmp_path))
    prediction = next(est.predict(_one_example))
    assert float(np.ravel(prediction)[0]) == pytest.approx(0.5 + 2.0)
    np.testing.assert_allclose(seen[0][0], [2.0])
    assert seen[0][1] is None


# 2.15: kernel and bias after 10 steps from a kernel an init_fn set to 2.0
# (the initial 0.5 otherwise), with the assignment built after minimize().
_AFTER_10_FROM_2 = (2.495907783508301, 0.8758841753005981)
_AFTER_10_FROM_HALF = (1.8340020179748535, 0.8061758279800415)


def _trained_10(init_fn_after, model_dir):
    est = keras_estimator.Estimator(model_fn_from(init_fn_after=init_fn_after), str(model_dir))
    est.train(_input_fn, steps=10)
    return _weights(est)


def test_init_fn_running_an_assignment_the_model_fn_built_runs_it_as_2_15(tmp_path):
    # The assignment comes after the training ops in the model_fn's graph;
    # it ran once, alone, in 2.15's session (it used to be read, not run).
    seen = []

    def init_fn_after(kernel, features):
        assign = v1.assign(kernel, [[2.0]])
        return lambda scaffold, session: seen.append(session.run(assign))

    assert _trained_10(init_fn_after, tmp_path) == pytest.approx(_AFTER_10_FROM_2, rel=1e-6)
    np.testing.assert_allclose(seen[0], [[2.0]])


@pytest.mark.parametrize("key", ["ref", "name"])
def test_init_fn_feeding_a_placeholder_runs_as_2_15(tmp_path, key):
    # The pretrained-embedding idiom: assign(placeholder) fed in init_fn.
    # The model_fn's tensors do not hash in TF2, so the feed is keyed by
    # the placeholder's ref() or name.
    def init_fn_after(kernel, features):
        placeholder = v1.placeholder(tf.float32, [1, 1])
        assign = kernel.assign(placeholder)
        feed_key = placeholder.ref() if key == "ref" else placeholder.name
        return lambda scaffold, session: session.run(assign, feed_dict={feed_key: [[2.0]]})

    assert _trained_10(init_fn_after, tmp_path) == pytest.approx(_AFTER_10_FROM_2, rel=1e-6)


def test_init_fn_fetching_a_model_fn_tensor_gets_its_value_and_changes_nothing(tmp_path):
    fetched = []

    def init_fn_after(kernel, features):
        quadrupled = kernel * 4.0
        return lambda scaffold, session: fetched.append(session.run({"k": quadrupled}))

    weights = _trained_10(init_fn_after, tmp_path)
    assert weights == pytest.approx(_AFTER_10_FROM_HALF, rel=1e-6)
    np.testing.assert_allclose(fetched[0]["k"], [[2.0]])


def test_init_fn_feeding_by_the_tensor_itself_is_an_error_naming_the_fix(tmp_path):
    def init_fn_after(kernel, features):
        placeholder = v1.placeholder(tf.float32, [1, 1])
        assign = kernel.assign(placeholder)
        return lambda scaffold, session: session.run(assign, feed_dict={placeholder: [[2.0]]})

    with pytest.raises(ValueError, match="do not hash") as raised:
        _trained_10(init_fn_after, tmp_path)
    assert "placeholder.ref()" in str(raised.value)


def test_init_fn_running_what_needs_the_batch_is_an_error_naming_the_fix(tmp_path):
    def init_fn_after(kernel, features):
        first = tf.reshape(features["x"][0], [1, 1])
        assign = kernel.assign(first)
        return lambda scaffold, session: session.run(assign)

    with pytest.raises(ValueError, match="cannot run before the first step") as raised:
        _trained_10(init_fn_after, tmp_path)
    assert "features or labels" in str(raised.value)


def test_init_fn_feeding_nothing_of_the_graph_is_an_error_naming_the_fix(tmp_path):
    def feed(mode):
        return lambda scaffold, session: session.run([], feed_dict={"x:0": 1.0})

    est = keras_estimator.Estimator(model_fn_from(init_fn_of=feed), str(tmp_path / "feed"))
    with pytest.raises(ValueError, match=r"feed_dict=\{'x:0': 1.0\}"):
        est.train(_input_fn, steps=1)


def test_init_fn_under_a_mirrored_strategy_gives_2_15s_training(checkpoint_a, tmp_path):
    # 2.15 under MirroredStrategy on two logical CPUs (ReductionToOneDevice).
    calls = []
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    est = keras_estimator.Estimator(
        model_fn_from(init_fn_of=_restoring_the_kernel_from(checkpoint_a, calls, as_dict=False)),
        str(tmp_path),
        config=keras_estimator.RunConfig(train_distribute=strategy),
    )
    est.train(_input_fn, steps=10)
    np.testing.assert_allclose(_weights(est), (1.9833682, 0.9731332), rtol=1e-5)
    est.train(_input_fn, steps=10)
    np.testing.assert_allclose(_weights(est), (2.5426867, 1.0186789), rtol=1e-5)
    assert est.evaluate(_input_fn, steps=4)["loss"] == pytest.approx(0.07455824, rel=1e-5)
    assert calls == [keras_estimator.ModeKeys.TRAIN]
