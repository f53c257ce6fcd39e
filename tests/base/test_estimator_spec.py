"""Unit tests for keras_estimator._src.base.estimator_spec.EstimatorSpec."""

from __future__ import annotations

import copy
import logging
import types

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from keras_estimator._src.base import estimator_spec
from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.export_outputs import PredictOutput
from keras_estimator._src.base.mode_keys import ModeKeys

TRAIN, EVAL, PREDICT = ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT

FIELDS = (
    "mode",
    "predictions",
    "loss",
    "train_op",
    "eval_metric_ops",
    "export_outputs",
    "training_chief_hooks",
    "training_hooks",
    "scaffold",
    "evaluation_hooks",
    "prediction_hooks",
)
HOOK_FIELDS = (
    "training_chief_hooks",
    "training_hooks",
    "evaluation_hooks",
    "prediction_hooks",
)


class DuckHook:
    """Has the SessionRunHook methods without subclassing anything."""

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        return None


def _loss(value=1.0):
    return tf.constant(value)


def _train_op():
    return tf.Variable(0, dtype=tf.int64)


def _train_spec(**kwargs):
    return EstimatorSpec(TRAIN, **{"loss": _loss(), "train_op": _train_op(), **kwargs})


# ---------------------------------------------------------------- structure


def test_is_a_namedtuple_with_tf_estimator_fields():
    spec = _train_spec()
    assert isinstance(spec, tuple)
    assert EstimatorSpec._fields == FIELDS
    assert len(spec) == len(FIELDS)


def test_defaults_for_optional_fields():
    spec = _train_spec()
    assert spec.mode == TRAIN
    assert spec.predictions == {}
    assert spec.eval_metric_ops == {}
    assert spec.export_outputs is None
    # 2.15 made an empty Scaffold when none was given.
    assert isinstance(spec.scaffold, tf.compat.v1.train.Scaffold)
    assert spec.scaffold.saver is None and spec.scaffold.init_fn is None
    for field in HOOK_FIELDS:
        assert getattr(spec, field) == ()


def test_positional_arguments():
    loss = _loss()
    spec = EstimatorSpec(EVAL, None, loss)
    assert spec.loss is loss


def test_copy_revalidates_and_keeps_values():
    spec = _train_spec(training_hooks=[DuckHook()])
    copied = copy.copy(spec)
    assert isinstance(copied, EstimatorSpec)
    assert copied.loss is spec.loss
    assert copied.training_hooks == spec.training_hooks


# ---------------------------------------------------------------- mode


@pytest.mark.parametrize("mode", [TRAIN, EVAL, PREDICT])
def test_valid_modes(mode):
    spec = EstimatorSpec(
        mode, predictions=tf.zeros([2]), loss=_loss(), train_op=_train_op()
    )
    assert spec.mode == mode


@pytest.mark.parametrize("mode", ["predict", "TRAIN", "bogus", 1])
def test_a_mode_that_is_no_mode_key_is_built_as_2_15_built_it(
    mode, caplog, monkeypatch
):
    # tf.estimator 2.15 checked no mode: EstimatorSpec('bogus', ...) built,
    # and (tests/estimator/test_spec_forms_2_15.py) trained, evaluated and
    # predicted. Here it is also named in a warning, once per mode.
    monkeypatch.setattr(estimator_spec, "_WARNED_MODES", set())
    with caplog.at_level(logging.WARNING, logger="keras_estimator"):
        spec = EstimatorSpec(
            mode, predictions=tf.zeros([1]), loss=_loss(), train_op=_train_op()
        )
    assert spec.mode == mode
    assert f"EstimatorSpec mode {mode!r} is not a ModeKeys value" in caplog.text
    assert ("ModeKeys.PREDICT is 'infer'" in caplog.text) == (mode == "predict")


def test_a_mode_that_is_no_mode_key_gets_no_mode_checks():
    # 2.15 required loss/train_op/predictions only of its own modes.
    spec = EstimatorSpec("bogus")
    assert spec.loss is None and spec.train_op is None and spec.predictions == {}


# ---------------------------------------------------------------- required fields


def test_train_requires_loss():
    with pytest.raises(
        ValueError,
        match=r"Missing loss: EstimatorSpec in mode 'train' requires `loss`, got None",
    ):
        EstimatorSpec(TRAIN, train_op=_train_op())


def test_eval_requires_loss():
    with pytest.raises(
        ValueError,
        match=r"Missing loss: EstimatorSpec in mode 'eval' requires `loss`, got None",
    ):
        EstimatorSpec(EVAL, predictions=tf.zeros([1]))


def test_train_requires_train_op():
    with pytest.raises(
        ValueError,
        match=r"Missing train_op: EstimatorSpec in mode 'train' requires `train_op`, got None",
    ):
        EstimatorSpec(TRAIN, loss=_loss())


def test_predict_requires_predictions():
    with pytest.raises(
        ValueError,
        match=r"Missing predictions: EstimatorSpec in mode 'infer' requires `predictions`, got None",
    ):
        EstimatorSpec(PREDICT)


def test_minimal_specs_per_mode():
    assert EstimatorSpec(EVAL, loss=_loss()).train_op is None
    spec = EstimatorSpec(PREDICT, predictions={"y": tf.zeros([3])})
    assert spec.loss is None
    assert spec.train_op is None


# ---------------------------------------------------------------- loss


def test_scalar_loss_kept():
    loss = _loss()
    assert _train_spec(loss=loss).loss is loss


@pytest.mark.parametrize("shape", [[1], [1, 1], [1, 1, 1]])
def test_single_element_loss_is_reshaped_to_scalar(shape):
    spec = _train_spec(loss=tf.ones(shape))
    assert spec.loss.shape == ()
    assert float(spec.loss) == 1.0


def test_non_scalar_loss():
    with pytest.raises(
        ValueError,
        match=r"Loss must be scalar \(shape \(\) or \[1\]\), got "
        r"EagerTensor\(shape=\(2,\), dtype=float32\).*tf.reduce_mean",
    ):
        _train_spec(loss=tf.zeros([2]))


@pytest.mark.parametrize(
    "loss, pattern",
    [
        (1.0, r"loss must be Tensor \(a dense tf.Tensor\), got 1.0 \(type float\)"),
        (np.float32(1.0), r"loss must be Tensor \(a dense tf.Tensor\), got .*float32"),
        ("loss", r"loss must be Tensor \(a dense tf.Tensor\), got 'loss' \(type str\)"),
    ],
)
def test_loss_must_be_a_tensor(loss, pattern):
    with pytest.raises(TypeError, match=pattern):
        _train_spec(loss=loss)


@pytest.mark.parametrize("dtype", ["string", "bool"])
def test_a_train_loss_must_be_a_real_number(dtype):
    # 2.15's error when train() summarized such a loss; ours goes on.
    loss = tf.constant("x") if dtype == "string" else tf.constant(True)
    with pytest.raises(
        TypeError,
        match=rf"^Value passed to parameter 'values' has DataType {dtype} not in "
        r"list of allowed values: .*loss must be a real number tensor, got "
        rf".*dtype={dtype}",
    ):
        _train_spec(loss=loss)


def test_symbolic_keras_tensor_loss_is_rejected():
    with pytest.raises(
        TypeError, match=r"loss must be Tensor \(a dense tf.Tensor\).*keras.Input"
    ):
        _train_spec(loss=keras.Input(shape=()))


def test_sparse_loss_is_rejected():
    sparse = tf.sparse.from_dense(tf.constant([1.0]))
    with pytest.raises(
        TypeError,
        match=r"loss must be Tensor \(a dense tf.Tensor\).*tf.sparse.to_dense",
    ):
        _train_spec(loss=sparse)


@pytest.mark.parametrize(
    "variable",
    [lambda: tf.Variable(2.0), lambda: keras.Variable(2.0)],
    ids=["tf", "keras"],
)
def test_variable_loss_is_converted(variable):
    spec = _train_spec(loss=variable())
    assert isinstance(spec.loss, tf.Tensor)
    assert float(spec.loss) == 2.0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=3), min_size=0, max_size=3))
def test_loss_shape_rule(shape):
    loss = tf.ones(shape)
    if int(np.prod(shape)) == 1:
        assert _train_spec(loss=loss).loss.shape == ()
    else:
        with pytest.raises(ValueError, match=r"Loss must be scalar"):
            _train_spec(loss=loss)


# ---------------------------------------------------------------- symbolic (traced)


def test_validation_inside_tf_function_with_keras_optimizer():
    weight = keras.Variable(1.0)
    optimizer = keras.optimizers.SGD(0.1)
    optimizer.build([weight])
    captured = {}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(x * weight, keepdims=True)  # shape [1]
        grads = tape.gradient(loss, [weight])
        train_op = optimizer.apply_gradients(zip(grads, [weight], strict=True))
        spec = EstimatorSpec(
            TRAIN,
            predictions={"y": x * weight},
            loss=loss,
            train_op=train_op,
            eval_metric_ops={"mean": (tf.reduce_mean(x), tf.no_op())},
        )
        captured["spec"] = spec
        return spec.loss

    result = step(tf.constant([1.0, 3.0]))
    assert result.shape == ()
    assert float(result) == pytest.approx(2.0)
    assert captured["spec"].loss.shape == ()


def test_unknown_shape_loss_is_accepted_when_traced():
    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def build(x):
        return EstimatorSpec(EVAL, loss=x).loss

    assert float(build(tf.constant(3.0))) == 3.0


def test_a_loss_of_shape_one_is_reshaped_when_traced():
    @tf.function(input_signature=[tf.TensorSpec([1], tf.float32)])
    def build(x):
        loss = EstimatorSpec(EVAL, loss=x).loss
        assert loss.shape == ()
        return loss

    assert float(build(tf.constant([4.0]))) == 4.0


def test_errors_raise_at_trace_time():
    @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)])
    def build(x):
        return EstimatorSpec(EVAL, loss=x).loss

    with pytest.raises(ValueError, match=r"Loss must be scalar.*SymbolicTensor"):
        build(tf.zeros([3]))


@pytest.mark.parametrize("shape", [[None], [None, 1], [1, None]])
def test_a_loss_of_unknown_size_is_reshaped_when_the_step_runs(shape):
    # tf.estimator 2.15 reshaped it to a scalar: a batch of 1 works (the
    # metrics/optimizers migration guide), a larger one fails at run time.
    @tf.function(input_signature=[tf.TensorSpec(shape, tf.float32)])
    def build(x):
        return EstimatorSpec(EVAL, loss=x).loss

    one = [1 if d is None else d for d in shape]
    loss = build(tf.fill(one, 2.5))
    assert loss.shape == () and float(loss) == 2.5
    three = [3 if d is None else d for d in shape]
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=r"loss must be a scalar.*other than one value.*reduce_mean",
    ):
        build(tf.zeros(three))


def test_graph_operation_train_op():
    @tf.function
    def build():
        op = tf.group(tf.constant(1.0))
        assert isinstance(op, tf.Operation)
        return EstimatorSpec(TRAIN, loss=tf.constant(0.0), train_op=op).loss

    assert float(build()) == 0.0


# ---------------------------------------------------------------- predictions


def test_predictions_tensor_and_dict():
    tensor = tf.zeros([2, 3])
    assert EstimatorSpec(PREDICT, predictions=tensor).predictions is tensor
    values = {"a": tf.zeros([2]), "b": tf.ones([2])}
    spec = EstimatorSpec(PREDICT, predictions=values)
    assert spec.predictions == values
    assert spec.predictions is not values


def test_predictions_mapping_becomes_dict():
    values = types.MappingProxyType({"a": tf.zeros([2])})
    assert type(EstimatorSpec(PREDICT, predictions=values).predictions) is dict


@pytest.mark.parametrize(
    "predictions, error, pattern",
    [
        (
            [tf.zeros([1])],
            TypeError,
            r"predictions must be Tensor \(a dense tf.Tensor\), got \[.*\(type list\)",
        ),
        (
            {"a": [1, 2]},
            TypeError,
            r"predictions\[a\] must be Tensor \(a dense tf.Tensor\), got \[1, 2\]",
        ),
        (
            np.zeros([2]),
            TypeError,
            r"predictions must be Tensor \(a dense tf.Tensor\), got .*ndarray",
        ),
    ],
)
def test_invalid_predictions(predictions, error, pattern):
    with pytest.raises(error, match=pattern):
        EstimatorSpec(PREDICT, predictions=predictions)


def test_predictions_validated_in_other_modes_too():
    with pytest.raises(
        TypeError, match=r"predictions\[p\] must be Tensor \(a dense tf.Tensor\)"
    ):
        _train_spec(predictions={"p": "nope"})


# ---------------------------------------------------------------- train_op


@pytest.mark.parametrize(
    "make_train_op",
    [
        lambda: tf.constant(1),
        lambda: tf.Variable(0),
        lambda: keras.Variable(0),
    ],
    ids=["tensor", "tf.Variable", "keras.Variable"],
)
def test_train_op_types(make_train_op):
    train_op = make_train_op()
    assert _train_spec(train_op=train_op).train_op is train_op


def test_keras_optimizer_apply_gradients_result_is_a_train_op():
    weight = keras.Variable(1.0)
    optimizer = keras.optimizers.SGD(0.1)
    train_op = optimizer.apply_gradients([(tf.constant(1.0), weight)])
    assert _train_spec(train_op=train_op).train_op is train_op


@pytest.mark.parametrize(
    "train_op, pattern",
    [
        (
            "minimize",
            r"train_op must be Operation or Tensor \(a tf.Operation, tf.Tensor, "
            r"tf.Variable or keras.Variable\), got 'minimize' \(type str\)",
        ),
        (1, r"train_op must be .* got 1 \(type int\)"),
        (lambda: None, r"train_op must be .*type function"),
    ],
)
def test_invalid_train_op(train_op, pattern):
    with pytest.raises(TypeError, match=pattern):
        _train_spec(train_op=train_op)


def test_train_op_validated_outside_train_mode():
    with pytest.raises(TypeError, match=r"train_op must be"):
        EstimatorSpec(EVAL, loss=_loss(), train_op="x")


# ---------------------------------------------------------------- eval_metric_ops


def test_eval_metric_ops_tuple_and_metric():
    value, update = tf.constant(1.0), tf.constant(2.0)
    metric = keras.metrics.Mean()
    nested = ((tf.constant(1.0), tf.constant(2.0)), tf.Variable(1.0))
    spec = EstimatorSpec(
        EVAL,
        loss=_loss(),
        eval_metric_ops={"a": (value, update), "b": metric, "c": nested},
    )
    assert spec.eval_metric_ops["a"] == (value, update)
    assert spec.eval_metric_ops["b"] is metric
    assert spec.eval_metric_ops["c"] is nested


@pytest.mark.parametrize(
    "eval_metric_ops, pattern",
    [
        ([("a", 1)], r"eval_metric_ops must be a dict of name .*type list"),
        (
            {"acc": tf.constant(1.0)},
            r"eval_metric_ops\['acc'\] must be a \(value_tensor, "
            r"update_op\) tuple or a keras.metrics.Metric, got EagerTensor",
        ),
        (
            {"acc": (tf.constant(1.0),)},
            r"eval_metric_ops\['acc'\] must be a \(value_tensor",
        ),
        (
            {"acc": [tf.constant(1.0), tf.constant(1.0)]},
            r"eval_metric_ops\['acc'\] must be",
        ),
        (
            {"acc": (1.0, tf.constant(1.0))},
            r"eval_metric_ops\['acc'\] value must be Operation or "
            r"Tensor \(a tf.Operation.*got 1.0",
        ),
        (
            {"acc": (tf.constant(1.0), None)},
            r"eval_metric_ops\['acc'\] update_op must be "
            r"Operation or Tensor \(a tf.Operation.*got None",
        ),
        (
            {3: (tf.constant(1.0), tf.constant(1.0))},
            r"eval_metric_ops keys must be strings",
        ),
    ],
)
def test_invalid_eval_metric_ops(eval_metric_ops, pattern):
    with pytest.raises(TypeError, match=pattern):
        EstimatorSpec(EVAL, loss=_loss(), eval_metric_ops=eval_metric_ops)


# ---------------------------------------------------------------- export_outputs


def test_export_outputs_dict_is_copied():
    outputs = {"serving_default": PredictOutput({"y": tf.zeros([1])})}
    spec = EstimatorSpec(PREDICT, predictions=tf.zeros([1]), export_outputs=outputs)
    assert spec.export_outputs == outputs
    assert spec.export_outputs is not outputs


@pytest.mark.parametrize(
    "export_outputs, pattern",
    [
        (
            [object()],
            r"export_outputs must be dict of signature name -> ExportOutput",
        ),
        (
            {1: object()},
            r"export_outputs keys must be signature-name strings, got key 1",
        ),
    ],
)
def test_invalid_export_outputs(export_outputs, pattern):
    with pytest.raises(TypeError, match=pattern):
        EstimatorSpec(PREDICT, predictions=tf.zeros([1]), export_outputs=export_outputs)


# ---------------------------------------------------------------- hooks


@pytest.mark.parametrize("field", HOOK_FIELDS)
def test_hooks_are_stored_as_tuples(field):
    hooks = [DuckHook(), tf.compat.v1.train.SessionRunHook()]
    spec = _train_spec(**{field: hooks})
    assert getattr(spec, field) == tuple(hooks)
    generator_spec = _train_spec(**{field: (hook for hook in hooks)})
    assert getattr(generator_spec, field) == tuple(hooks)


@pytest.mark.parametrize("field", HOOK_FIELDS)
def test_single_hook_must_be_wrapped(field):
    with pytest.raises(
        TypeError,
        match=rf"{field} must be a list of hooks, got a single hook .*\[hook\]",
    ):
        _train_spec(**{field: DuckHook()})


@pytest.mark.parametrize("field", HOOK_FIELDS)
@pytest.mark.parametrize(
    "hooks, pattern",
    [
        (
            [object()],
            r"All hooks must be SessionRunHook instances .*got <object object.* in {field}\.",
        ),
        (
            [DuckHook(), "hook"],
            r"All hooks must be SessionRunHook instances .*got 'hook' \(type str\) in {field}\.",
        ),
        ("hooks", r"{field} must be a list of SessionRunHook objects, got 'hooks'"),
        (
            {"h": DuckHook()},
            r"{field} must be a list of SessionRunHook objects, got \{{",
        ),
        (5, r"{field} must be a list of SessionRunHook objects, got 5"),
    ],
)
def test_invalid_hooks(field, hooks, pattern):
    with pytest.raises(TypeError, match=pattern.format(field=field)):
        _train_spec(**{field: hooks})


def test_hook_without_after_run_is_rejected():
    class HalfHook:
        def before_run(self, run_context):
            return None

    with pytest.raises(
        TypeError,
        match=r"All hooks must be SessionRunHook instances .* in training_hooks\.",
    ):
        _train_spec(training_hooks=[HalfHook()])


# ---------------------------------------------------------------- scaffold


def test_scaffold_is_stored_as_given():
    scaffold = tf.compat.v1.train.Scaffold()
    assert _train_spec(scaffold=scaffold).scaffold is scaffold


# ---------------------------------------------------------------- _replace


def test_replace_revalidates():
    spec = _train_spec()
    new = spec._replace(loss=tf.ones([1]))
    assert isinstance(new, EstimatorSpec)
    assert new.loss.shape == ()
    assert new.train_op is spec.train_op
    with pytest.raises(ValueError, match=r"Loss must be scalar"):
        spec._replace(loss=tf.zeros([4]))
    with pytest.raises(
        ValueError,
        match=r"Missing train_op: EstimatorSpec in mode 'train' requires `train_op`",
    ):
        spec._replace(train_op=None)


def test_replace_hooks_are_tuples():
    spec = _train_spec()._replace(training_hooks=[DuckHook()])
    assert isinstance(spec.training_hooks, tuple)


def test_replace_cannot_change_mode():
    spec = _train_spec()
    assert spec._replace(mode=TRAIN).mode == TRAIN
    with pytest.raises(
        ValueError,
        match=r"mode of EstimatorSpec cannot be changed.*'train', got 'eval'",
    ):
        spec._replace(mode=EVAL)


def test_replace_unknown_field():
    with pytest.raises(
        ValueError, match=r"EstimatorSpec has no field\(s\) \['losses'\]"
    ):
        _train_spec()._replace(losses=_loss())


@pytest.mark.parametrize("key", [1, ("a", 2), 2.5])
def test_prediction_keys_of_any_kind_are_kept_as_2_15_kept_them(key):
    # 2.15 checked only the values: predict() yields such keys as given.
    spec = EstimatorSpec(TRAIN, predictions={key: tf.zeros([1])}, loss=_loss(),
                         train_op=_train_op())  # fmt: skip
    assert list(spec.predictions) == [key]
