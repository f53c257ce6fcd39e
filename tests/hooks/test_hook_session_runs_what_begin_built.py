"""A hook's `after_create_session` runs what its `begin()` built, as in 2.15.

TF1 programs load pretrained values from a hook: `begin()` finds a model
variable (in GLOBAL_VARIABLES, or `get_variable` under `reuse=True`) and
builds an assignment, often of a placeholder; `after_create_session` runs
it with `session.run(op, feed_dict=...)`. The expected figures are
tf.estimator 2.15's (tensorflow-cpu 2.15.1, tensorflow-estimator 2.15.0)
on the same program: the one-unit dense layer of `_one_unit_dense.py`
(kernel 0.5, bias 0.25, gradient descent 0.1 on y = 3x + 1), its kernel set
to 2.0 by the hook, then trained 10 steps.
"""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator
from tests.estimator._one_unit_dense import input_fn, model_fn_from, weights

v1 = tf.compat.v1

# 2.15: kernel and bias after 10 steps from the kernel the hook set; the same
# program without the hook.
_AFTER_10_FROM_2 = (2.495907783508301, 0.8758841753005981)
_AFTER_10_FROM_HALF = (1.8340020179748535, 0.8061758279800415)


class _LoadKernel(keras_estimator.SessionRunHook):
    def __init__(self, how):
        self.how = how
        self.seen = None

    def begin(self):
        if self.how == "collection":
            (kernel,) = [v for v in v1.global_variables() if v.name == "out/kernel:0"]
            self.op, self.placeholder = v1.assign(kernel, [[2.0]]), None
        else:
            with v1.variable_scope("out", reuse=True):
                kernel = v1.get_variable("kernel")
            self.placeholder = v1.placeholder(tf.float32, [1, 1])
            self.op = kernel.assign(self.placeholder)

    def after_create_session(self, session, coord):
        feed = None if self.placeholder is None else {self.placeholder: [[2.0]]}
        self.seen = session.run(self.op, feed_dict=feed)


@pytest.mark.parametrize("how", ["collection", "reuse_and_feed"])
def test_an_assignment_built_in_begin_runs_in_after_create_session(tmp_path, how):
    est = keras_estimator.Estimator(model_fn_from(), str(tmp_path))
    hook = _LoadKernel(how)
    est.train(input_fn, steps=10, hooks=[hook])
    assert weights(est) == pytest.approx(_AFTER_10_FROM_2, rel=1e-6)
    np.testing.assert_allclose(hook.seen, [[2.0]])


def test_without_the_hook_training_starts_from_the_initial_kernel(tmp_path):
    # The control: the figures above come from the hook's assignment.
    est = keras_estimator.Estimator(model_fn_from(), str(tmp_path))
    est.train(input_fn, steps=10)
    assert weights(est) == pytest.approx(_AFTER_10_FROM_HALF, rel=1e-6)


def test_a_value_read_in_after_create_session_needs_no_batch_and_changes_nothing(tmp_path):
    class _Read(keras_estimator.SessionRunHook):
        def begin(self):
            (kernel,) = [v for v in v1.global_variables() if v.name == "out/kernel:0"]
            self.doubled = kernel * 2.0

        def after_create_session(self, session, coord):
            self.seen = session.run(self.doubled)

    est = keras_estimator.Estimator(model_fn_from(), str(tmp_path))
    hook = _Read()
    est.train(input_fn, steps=10, hooks=[hook])
    np.testing.assert_allclose(hook.seen, [[1.0]])
    assert weights(est) == pytest.approx(_AFTER_10_FROM_HALF, rel=1e-6)
