"""`tf.compat.v1.keras.utils.DeterministicRandomTestTool` under `install()`.

The expected numbers are tf.keras 2.15's (tensorflow-cpu 2.15.1), from the
same calls run there: the tool's seeds decide every eager random op made in
its scope, in both modes.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator
from keras_estimator._src.zero_change.deterministic_random import (
    DeterministicRandomTestTool,
)

# tf.random.uniform([3]) with seeds (42, 0), and (42, 1); the default
# (glorot uniform) initial value of get_variable(name, [2, 2]) with (42, 0)
# and (42, 2).
UNIFORM_0 = [0.835459, 0.916297, 0.49465]
UNIFORM_1 = [0.150128, 0.639925, 0.817878]
GLOROT_0 = [0.821704, 1.019716, -0.013106, 0.051717]
GLOROT_2 = [1.194892, -0.337852, 0.901616, -0.652387]


@pytest.fixture(autouse=True)
def _global_seed_put_back():
    yield
    tf.random.set_seed(0)  # scope() sets it, as 2.15's did; the suite's own


@pytest.fixture
def installed():
    keras_estimator.install()
    try:
        yield
    finally:
        keras_estimator.uninstall()


def _draws(tool: DeterministicRandomTestTool, name: str):
    with tool.scope():
        first = tf.random.uniform([3]).numpy()
        second = tf.random.uniform([3]).numpy()
        weights = tf.compat.v1.get_variable(name, [2, 2]).numpy().ravel()
    return first, second, weights


def test_constant_mode_gives_every_op_the_same_seeds():
    first, second, weights = _draws(DeterministicRandomTestTool(), "w_constant")
    np.testing.assert_allclose(first, UNIFORM_0, atol=1e-6)
    np.testing.assert_allclose(second, UNIFORM_0, atol=1e-6)
    np.testing.assert_allclose(weights, GLOROT_0, atol=1e-6)


def test_num_random_ops_mode_counts_the_ops():
    tool = DeterministicRandomTestTool(mode="num_random_ops")
    first, second, weights = _draws(tool, "w_counted")
    np.testing.assert_allclose(first, UNIFORM_0, atol=1e-6)
    np.testing.assert_allclose(second, UNIFORM_1, atol=1e-6)
    np.testing.assert_allclose(weights, GLOROT_2, atol=1e-6)
    assert tool.operation_seed == 3


def test_a_reused_operation_seed_is_refused():
    tool = DeterministicRandomTestTool(seed=7, mode="num_random_ops")
    with tool.scope():
        tf.random.uniform([1])
        tool.operation_seed = 0
        with pytest.raises(ValueError, match="re-use the already-used operation seed 0"):
            tf.random.uniform([1])


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="Mode arg must be 'constant' or 'num_random_ops'.*'x'"):
        DeterministicRandomTestTool(mode="x")


def test_ops_get_their_own_seeds_again_after_the_scope():
    with DeterministicRandomTestTool().scope():
        inside = tf.random.uniform([3], seed=5).numpy()  # the op's seed ignored
    np.testing.assert_allclose(inside, UNIFORM_0, atol=1e-6)
    tf.random.set_seed(42)
    after = tf.random.uniform([3], seed=5).numpy()
    assert not np.allclose(after, UNIFORM_0, atol=1e-3)
    tf.random.set_seed(42)
    np.testing.assert_array_equal(after, tf.random.uniform([3], seed=5).numpy())


def test_install_names_it_where_keras_has_none(installed):
    assert tf.compat.v1.keras.utils.DeterministicRandomTestTool is DeterministicRandomTestTool


def test_uninstall_takes_the_name_back():
    had = hasattr(tf.keras.utils, "DeterministicRandomTestTool")
    keras_estimator.install()
    keras_estimator.uninstall()
    assert hasattr(tf.keras.utils, "DeterministicRandomTestTool") == had
