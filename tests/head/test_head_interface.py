"""`Head` as an interface, as tf.estimator 2.15's base_head_test pins it.

A subclass implements the abstract members and either
`create_estimator_spec` or `_create_tpu_estimator_spec`; implementing
neither is an error when the spec is asked for, and leaving an abstract
member out is an error when the head is made.
"""

import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator.compat.estimator.tpu import TPUEstimatorSpec


class _Members(ke.Head):
    name = "members"
    logits_dimension = 1
    loss_reduction = "sum_over_batch_size"

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        return None

    def predictions(self, logits, keys=None):
        return None

    def metrics(self, regularization_losses=None):
        return None

    def update_metrics(self, eval_metrics, features, logits, labels, regularization_losses=None):
        return None


class _WithTPUSpec(_Members):
    def _create_tpu_estimator_spec(self, features, mode, logits, **kwargs):
        return TPUEstimatorSpec(
            mode=ke.ModeKeys.EVAL, loss=tf.constant(0.0)
        )


class _WithSpec(_Members):
    def create_estimator_spec(self, features, mode, logits, **kwargs):
        return ke.EstimatorSpec(mode=ke.ModeKeys.EVAL, loss=tf.constant(0.0))


def test_a_head_with_only_a_tpu_spec_gives_its_estimator_spec():
    spec = _WithTPUSpec().create_estimator_spec(features=None, mode=None, logits=None)
    assert isinstance(spec, ke.EstimatorSpec)
    assert spec.mode == ke.ModeKeys.EVAL
    assert float(spec.loss) == 0.0


def test_a_head_with_its_own_spec_has_no_tpu_spec():
    head = _WithSpec()
    with pytest.raises(NotImplementedError, match="TPUEstimatorSpec not available for this model head."):
        head._create_tpu_estimator_spec(features=None, mode=None, logits=None)
    assert isinstance(head.create_estimator_spec(features=None, mode=None, logits=None), ke.EstimatorSpec)


def test_a_head_with_neither_spec_says_so():
    with pytest.raises(
        NotImplementedError,
        match=r"Subclasses of Head must implement `create_estimator_spec\(\)` or "
        r"_create_tpu_estimator_spec\(\)\. _Members implements neither",
    ):
        _Members().create_estimator_spec(features=None, mode=None, logits=None)


def test_a_head_missing_an_abstract_member_cannot_be_made():
    class _NoMetrics(ke.Head):
        name = logits_dimension = loss_reduction = None

        def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
            return None

        def predictions(self, logits, keys=None):
            return None

        def update_metrics(self, *args, **kwargs):
            return None

    with pytest.raises(TypeError, match="metrics"):
        _NoMetrics()
    with pytest.raises(TypeError):
        ke.Head()
