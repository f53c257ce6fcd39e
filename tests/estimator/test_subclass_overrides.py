"""Subclasses of Estimator may not override its members, as in tf.estimator 2.15.

2.15's constructor refused a subclass whose own class body redefined a
member of Estimator (public or private, but for `model_fn`,
`latest_checkpoint` and a few private hooks) with a ValueError starting
"Subclasses of Estimator cannot override members of Estimator."; its own
estimator_test checks `predict`. A subclass adding members of its own, one
of a subclass, or one named TPUEstimator was let through.
"""

from __future__ import annotations

import pytest
import tensorflow as tf

import keras_estimator as ke


def _model_fn(features, labels, mode):
    step = tf.compat.v1.train.get_or_create_global_step()
    return ke.EstimatorSpec(
        mode, loss=tf.constant(0.0), train_op=step.assign_add(1), predictions=features
    )


def _input_fn():
    return tf.data.Dataset.from_tensors(({"x": [[1.0]]}, [[1.0]]))


@pytest.mark.parametrize("member", ["predict", "train", "_call_model_fn", "model_dir"])
def test_a_subclass_overriding_a_member_is_refused_as_in_2_15(tmp_path, member):
    def body(self, *args, **kwargs):
        return None

    overriding = type("_Estimator", (ke.Estimator,), {member: body})
    with pytest.raises(
        ValueError,
        match=r"^Subclasses of Estimator cannot override members of Estimator\. "
        rf".*_Estimator.* does override \['{member}'\]",
    ):
        overriding(_model_fn, str(tmp_path))


def test_the_v1_estimator_and_canned_estimators_refuse_it_too(tmp_path):
    class _V1(ke.compat.estimator.Estimator):
        def evaluate(self, *args, **kwargs):
            return {}

    class _Regressor(ke.LinearRegressor):
        def predict(self, *args, **kwargs):
            return iter(())

    with pytest.raises(ValueError, match=r"^Subclasses of Estimator cannot override .*evaluate"):
        _V1(_model_fn, str(tmp_path / "v1"))
    with pytest.raises(ValueError, match=r"^Subclasses of Estimator cannot override .*predict"):
        _Regressor([tf.feature_column.numeric_column("x")], model_dir=str(tmp_path / "lr"))


def test_what_2_15_let_through_still_works(tmp_path):
    class _Own(ke.Estimator):
        """New members, and the two 2.15 allowed."""

        def __init__(self, model_dir):
            super().__init__(_model_fn, model_dir)

        def helper(self):
            return "mine"

        @property
        def model_fn(self):
            return super().model_fn

        def latest_checkpoint(self):
            return super().latest_checkpoint()

    class _Grandchild(_Own):  # 2.15 read only the object's own class body
        pass

    class TPUEstimator(ke.Estimator):  # 2.15 let any class of this name through
        def predict(self, *args, **kwargs):
            return iter(())

    est = _Grandchild(str(tmp_path / "own"))
    est.train(_input_fn, steps=1)
    assert est.helper() == "mine"
    assert est.latest_checkpoint().endswith("model.ckpt-1")
    assert list(TPUEstimator(_model_fn, str(tmp_path / "tpu")).predict(_input_fn)) == []
