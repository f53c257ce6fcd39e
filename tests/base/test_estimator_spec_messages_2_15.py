"""EstimatorSpec refuses bad fields with 2.15's exception type and first phrase.

Each pattern is the regex tf.estimator v2.15.0's model_fn_test.py asserted
for the same field values (EstimatorSpecTrainTest / EvalTest / InferTest).
Our messages go on to name the value received and the fix.
"""

from __future__ import annotations

import re

import pytest
import tensorflow as tf

from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.export_outputs import ClassificationOutput
from keras_estimator._src.base.mode_keys import ModeKeys

TRAIN, EVAL, PREDICT = ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT


class _NotAHook:
    pass


class _NotAScaffold:
    pass


def _sparse():
    return tf.sparse.SparseTensor(indices=[[0]], values=[0.0], dense_shape=[1])


def _train(**kw):
    return {"mode": TRAIN, "loss": tf.constant(1.0), "train_op": tf.no_op(), **kw}


def _eval(**kw):
    return {
        "mode": EVAL,
        "predictions": {"loss": tf.constant(1.0)},
        "loss": tf.constant(1.0),
        **kw,
    }


def _predict(**kw):
    return {"mode": PREDICT, "predictions": {"loss": tf.constant(1.0)}, **kw}


HOOKS = "All hooks must be SessionRunHook instances"

# (name, build kwargs inside a graph, 2.15's exception type, 2.15's regex)
CASES = [
    ("train_loss_number", lambda: _train(loss=1.0), TypeError, "loss must be Tensor"),
    ("train_loss_missing", lambda: _train(loss=None), ValueError, "Missing loss"),
    (
        "train_loss_not_scalar",
        lambda: _train(loss=tf.constant([1.0, 2.0])),
        ValueError,
        "Loss must be scalar",
    ),
    (
        "train_loss_sparse",
        lambda: _train(loss=_sparse()),
        TypeError,
        "loss must be Tensor",
    ),
    ("train_op_missing", lambda: _train(train_op=None), ValueError, "Missing train_op"),
    (
        "train_op_string",
        lambda: _train(train_op="Not an Operation or Tensor"),
        TypeError,
        "train_op must be Operation or Tensor",
    ),
    (
        "chief_hook",
        lambda: _train(training_chief_hooks=[_NotAHook()]),
        TypeError,
        HOOKS,
    ),
    ("training_hook", lambda: _train(training_hooks=[_NotAHook()]), TypeError, HOOKS),
    (
        "scaffold",
        lambda: _train(scaffold=_NotAScaffold()),
        TypeError,
        r"scaffold must be tf\.train\.Scaffold",
    ),
    (
        "evaluation_hook",
        lambda: _eval(evaluation_hooks=[_NotAHook()]),
        TypeError,
        HOOKS,
    ),
    ("eval_loss_number", lambda: _eval(loss=1.0), TypeError, "loss must be Tensor"),
    ("eval_loss_missing", lambda: _eval(loss=None), ValueError, "Missing loss"),
    (
        "eval_loss_not_scalar",
        lambda: _eval(loss=tf.constant([1.0, 2.0])),
        ValueError,
        "Loss must be scalar",
    ),
    (
        "eval_loss_sparse",
        lambda: _eval(loss=_sparse()),
        TypeError,
        "loss must be Tensor",
    ),
    (
        "eval_predictions_number",
        lambda: _eval(predictions={"number": 1.0}),
        TypeError,
        r"predictions\[number\] must be Tensor",
    ),
    (
        "eval_predictions_sparse",
        lambda: _eval(predictions={"sparse": _sparse()}),
        TypeError,
        r"predictions\[sparse\] must be Tensor",
    ),
    (
        "eval_metric_not_tuple",
        lambda: _eval(eval_metric_ops={"loss": tf.constant(1.0)}),
        TypeError,
        r"Values of eval_metric_ops must be \(metric_value, update_op\) tuples",
    ),
    (
        "prediction_hook",
        lambda: _predict(predictions=tf.constant(1.0), prediction_hooks=[_NotAHook()]),
        TypeError,
        HOOKS,
    ),
    (
        "predictions_missing",
        lambda: _predict(predictions=None),
        ValueError,
        "Missing predictions",
    ),
    (
        "infer_predictions_number",
        lambda: _predict(predictions={"number": 1.0}),
        TypeError,
        r"predictions\[number\] must be Tensor",
    ),
    (
        "infer_predictions_sparse",
        lambda: _predict(predictions={"sparse": _sparse()}),
        TypeError,
        r"predictions\[sparse\] must be Tensor",
    ),
    (
        "export_outputs_not_dict",
        lambda: _predict(
            export_outputs=ClassificationOutput(classes=tf.constant("hello"))
        ),
        TypeError,
        "[`]*export_outputs[`]* must be dict",
    ),
    (
        "export_outputs_value",
        lambda: _predict(export_outputs={"head_name": {"loss": tf.constant(1.0)}}),
        TypeError,
        r"Values in [`]*export_outputs[`]* must be ExportOutput objects.",
    ),
]


@pytest.mark.parametrize(
    "build, error, pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_refusal_starts_with_2_15s_phrase(build, error, pattern):
    with tf.Graph().as_default():
        kwargs = build()
        with pytest.raises(error) as excinfo:
            EstimatorSpec(**kwargs)
    message = str(excinfo.value)
    assert re.search(pattern, message), message
    # The phrase leads the message, and the value received is still named.
    assert re.match(pattern, message), message
    assert "got" in message, message


def test_replace_runs_the_constructor_checks_with_2_15s_phrases():
    with tf.Graph().as_default():
        spec = EstimatorSpec(**_eval())
        with pytest.raises(ValueError, match="^Loss must be scalar"):
            spec._replace(loss=tf.constant([1.0, 2.0]))
        assert spec._replace(mode=EVAL).mode == EVAL
        with pytest.raises(ValueError, match="mode of EstimatorSpec cannot be changed"):
            spec._replace(mode=TRAIN)


def _from_another_graph(build):
    with tf.Graph().as_default():
        return build()


GRAPH_CASES = [
    (
        "train_loss",
        lambda: _train(loss=_from_another_graph(lambda: tf.constant(1.0))),
    ),
    ("train_op", lambda: _train(train_op=_from_another_graph(tf.no_op))),
    (
        "eval_loss",
        lambda: _eval(loss=_from_another_graph(lambda: tf.constant(1.0))),
    ),
    (
        "eval_predictions",
        lambda: _eval(
            predictions=_from_another_graph(lambda: {"loss": tf.constant(1.0)})
        ),
    ),
    (
        "eval_metric_tuple",
        lambda: _eval(
            eval_metric_ops=_from_another_graph(
                lambda: {"loss": (tf.no_op(), tf.constant(1.0))}
            )
        ),
    ),
]


@pytest.mark.parametrize(
    "build", [c[1] for c in GRAPH_CASES], ids=[c[0] for c in GRAPH_CASES]
)
def test_tensor_from_another_graph_is_refused_with_2_15s_phrase(build):
    with tf.Graph().as_default():
        kwargs = build()
        with pytest.raises(ValueError, match="must be from the default graph: got "):
            EstimatorSpec(**kwargs)


def test_model_fn_returning_another_graphs_loss_is_refused_when_the_spec_is_made(
    tmp_path,
):
    import keras_estimator as ke

    foreign = _from_another_graph(lambda: tf.constant(1.0))

    def model_fn(features, labels, mode):
        step = tf.compat.v1.train.get_or_create_global_step()
        return ke.EstimatorSpec(
            mode, loss=foreign, train_op=tf.compat.v1.assign_add(step, 1)
        )

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="^loss must be from the default graph"):
        est.train(lambda: ({"x": tf.ones([2, 1])}, tf.ones([2, 1])), steps=1)


def test_tensors_of_an_enclosing_traced_graph_are_accepted():
    # A traced function may use its enclosing graph's tensors (captured).
    with tf.Graph().as_default():
        outer = tf.constant(2.0)

        @tf.function
        def build():
            spec = EstimatorSpec(PREDICT, predictions={"y": outer})
            return spec.predictions["y"]

        assert build().graph is tf.compat.v1.get_default_graph()
