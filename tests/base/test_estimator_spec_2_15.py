"""EstimatorSpec and the Estimator built from it as tf.estimator 2.15 did.

Expected values come from tf.estimator v2.15.0's model_fn_test.py and
estimator_test.py (test_tuple_metrics, test_minimal_model_fn_args,
test_summary_writing_with_summary_proto / _with_tensor).
"""

from __future__ import annotations

import glob

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.export_outputs import (
    ClassificationOutput,
    PredictOutput,
    RegressionOutput,
)
from keras_estimator._src.base.mode_keys import ModeKeys

TRAIN, EVAL, PREDICT = ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT
SERVING = "serving_default"


def _predictions():
    return {"y": tf.constant([1.0, 2.0])}


# ---------------------------------------------------------------- export_outputs


def test_predict_without_export_outputs_serves_the_predictions_by_default():
    predictions = _predictions()
    spec = EstimatorSpec(PREDICT, predictions=predictions)
    assert list(spec.export_outputs) == [SERVING]
    output = spec.export_outputs[SERVING]
    assert isinstance(output, PredictOutput)
    assert output.outputs == {"y": predictions["y"]}


def test_predict_with_a_single_tensor_serves_it_as_output():
    prediction = tf.constant([1.0, 2.0])
    spec = EstimatorSpec(PREDICT, predictions=prediction)
    assert spec.export_outputs[SERVING].outputs == {"output": prediction}


def test_train_and_eval_get_no_default_export_outputs():
    loss = tf.constant(1.0)
    assert (
        EstimatorSpec(EVAL, loss=loss, predictions=_predictions()).export_outputs
        is None
    )


def test_one_export_output_under_another_name_is_also_the_default():
    scores = tf.constant([[0.2, 0.8]])
    classification = ClassificationOutput(scores=scores)
    spec = EstimatorSpec(
        PREDICT, predictions=_predictions(), export_outputs={"classify": classification}
    )
    assert spec.export_outputs == {"classify": classification, SERVING: classification}


def test_several_export_outputs_without_a_default_raise_2_15s_value_error():
    outputs = {
        "classify": ClassificationOutput(scores=tf.constant([[0.2, 0.8]])),
        "regress": RegressionOutput(value=tf.constant([0.5])),
    }
    with pytest.raises(
        ValueError,
        match=r"Multiple `export_outputs` were provided, but none of them are "
        r"specified as the default: .*\['classify', 'regress'\]",
    ):
        EstimatorSpec(PREDICT, predictions=_predictions(), export_outputs=outputs)


def test_several_export_outputs_with_a_default_are_kept():
    outputs = {
        SERVING: RegressionOutput(value=tf.constant([0.5])),
        "predict": PredictOutput(_predictions()),
    }
    spec = EstimatorSpec(PREDICT, predictions=_predictions(), export_outputs=outputs)
    assert spec.export_outputs == outputs


# ---------------------------------------------------------------- scaffold, mode, metrics


def test_scaffold_defaults_to_an_empty_scaffold():
    spec = EstimatorSpec(PREDICT, predictions=_predictions())
    assert isinstance(spec.scaffold, tf.compat.v1.train.Scaffold)
    given = tf.compat.v1.train.Scaffold()
    assert (
        EstimatorSpec(PREDICT, predictions=_predictions(), scaffold=given).scaffold
        is given
    )


def test_mode_none_is_accepted():
    spec = EstimatorSpec(mode=None, predictions=tf.constant(0.0), loss=tf.constant(0.0))
    assert spec.mode is None


def test_a_global_step_or_loss_metric_builds_as_in_2_15():
    # 2.15 refused them in evaluate() only (below), not in the spec.
    loss = tf.constant(1.0)
    for key in ("global_step", "loss"):
        spec = EstimatorSpec(EVAL, loss=loss, eval_metric_ops={key: (loss, loss)})
        assert list(spec.eval_metric_ops) == [key]


def _step_model_fn(eval_metric_ops):
    def model_fn(features, labels, mode):
        step = tf.compat.v1.train.get_or_create_global_step()
        return ke.EstimatorSpec(
            mode,
            loss=tf.constant(1.0),
            train_op=tf.compat.v1.assign_add(step, 1),
            predictions={"y": tf.ones([1])},
            eval_metric_ops=eval_metric_ops(),
        )

    return model_fn


def _dummy_input_fn():
    return {"x": tf.constant([[1.0]])}, tf.constant([[1.0]])


def test_evaluate_refuses_a_global_step_metric(tmp_path):
    est = ke.Estimator(
        _step_model_fn(lambda: {"global_step": (tf.constant(7.0), tf.no_op())}),
        model_dir=str(tmp_path),
    )
    est.train(_dummy_input_fn, steps=1)
    with pytest.raises(
        ValueError, match=r"Metric with name `global_step` is not allowed"
    ):
        est.evaluate(_dummy_input_fn, steps=1)


def test_evaluate_refuses_a_loss_metric_as_2_15_did(tmp_path):
    # Before, the metric's 5.0 was reported as the loss.
    est = ke.Estimator(
        _step_model_fn(lambda: {"loss": tf.compat.v1.metrics.mean(tf.constant(5.0))}),
        model_dir=str(tmp_path),
    )
    est.train(_dummy_input_fn, steps=1)
    with pytest.raises(
        ValueError,
        match=r'^Metric with name "loss" is not allowed, because Estimator already '
        r"defines a default metric with the same name",
    ):
        est.evaluate(_dummy_input_fn, steps=1)


def test_nested_tuple_metric_values_are_returned_nested(tmp_path):
    # 2.15 estimator_test.test_tuple_metrics.
    def metrics():
        value = ((tf.constant(2.0), tf.constant(1)), tf.constant(3.0, tf.float64))
        return {"nested_metric": (value, tf.no_op())}

    est = ke.Estimator(_step_model_fn(metrics), model_dir=str(tmp_path))
    est.train(_dummy_input_fn, steps=1)
    evaluation = est.evaluate(_dummy_input_fn, steps=1)
    (two_float, one_integer), three_double = evaluation["nested_metric"]
    assert two_float == pytest.approx(2.0)
    assert one_integer == 1
    assert three_double == pytest.approx(3.0)


def test_model_fn_without_mode_may_return_mode_none(tmp_path):
    # 2.15 estimator_test.test_minimal_model_fn_args.
    calls = []

    def model_fn(features):
        calls.append(sorted(features))
        step = tf.compat.v1.train.get_or_create_global_step()
        return ke.EstimatorSpec(
            mode=None,
            predictions=tf.constant(0.0),
            loss=tf.constant(0.0),
            train_op=tf.compat.v1.assign_add(step, 1),
        )

    est = ke.Estimator(model_fn=model_fn, model_dir=str(tmp_path))
    est.train(input_fn=lambda: {"x": 4, "y": 5}, steps=1)
    assert calls and all(keys == ["x", "y"] for keys in calls)
    assert est.get_variable_value("global_step") == 1


# ---------------------------------------------------------------- eval event file


def _eval_values(eval_dir):
    values = {}
    for path in glob.glob(f"{eval_dir}/events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                values[value.tag] = value
    return values


def test_image_summary_metric_is_written_as_2_15_wrote_it(tmp_path):
    # 2.15 estimator_test.test_summary_writing_with_summary_proto: a metric
    # whose value is a serialized Summary is written as its values, tagged
    # '<key>/<i>'.
    def metrics():
        image = tf.zeros([5, 3, 3, 1])
        summary = tf.compat.v1.summary.image("image", image, max_outputs=3)
        return {"foo": (summary, tf.constant(1))}

    est = ke.Estimator(_step_model_fn(metrics), model_dir=str(tmp_path))
    est.train(_dummy_input_fn, steps=2)
    est.evaluate(_dummy_input_fn, steps=2)
    values = _eval_values(est.eval_dir())
    for index in range(3):
        value = values[f"foo/{index}"]
        assert value.HasField("image")
        assert (value.image.height, value.image.width) == (3, 3)


def test_non_scalar_metric_is_written_as_a_tensor_summary(tmp_path):
    # 2.15 estimator_test.test_summary_writing_with_tensor.
    def metrics():
        return {"PMT": tf.compat.v1.metrics.mean_tensor(tf.constant([1.0, 0.5, 0.0]))}

    est = ke.Estimator(_step_model_fn(metrics), model_dir=str(tmp_path))
    est.train(_dummy_input_fn, steps=2)
    result = est.evaluate(_dummy_input_fn, steps=2)
    np.testing.assert_allclose(result["PMT"], [1.0, 0.5, 0.0])
    value = _eval_values(est.eval_dir())["PMT"]
    assert value.HasField("tensor")
    np.testing.assert_allclose(tf.make_ndarray(value.tensor), [1.0, 0.5, 0.0])
