"""Malformed input always ends in a clear ValueError or TypeError.

Hypothesis generates bad `EstimatorSpec` arguments, bad input_fn results,
bad `RunConfig` arguments and bad `TF_CONFIG` values. Each must be refused
with a `ValueError`/`TypeError` whose message names the argument (or
TF_CONFIG field) and shows what was received, never a TensorFlow-internal
error, a hang, or silent acceptance. Valid values stay accepted.
"""

from __future__ import annotations

import functools
import json
import re

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import example, given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator._src.base.estimator_spec import EstimatorSpec
from keras_estimator._src.base.export_outputs import PredictOutput
from keras_estimator._src.base.mode_keys import ALL_MODES, ModeKeys
from keras_estimator._src.base.run_config import RunConfig
from keras_estimator._src.base.tf_config import _parse_tf_config
from tests._models import input_fn, make_data, mlp_model_fn


def _raises_clear(call, *hints: str):
    """Runs `call`; it must raise ValueError/TypeError mentioning every hint."""
    with pytest.raises((ValueError, TypeError)) as excinfo:
        call()
    message = str(excinfo.value)
    for hint in hints:
        assert re.search(hint, message), f"{hint!r} not in {message!r}"
    return excinfo.value


# ------------------------------------------------------------ shared junk


class _Opaque:
    """An object no argument accepts."""

    def __repr__(self) -> str:
        return "<opaque>"


# Values that are the wrong type for every EstimatorSpec and RunConfig field
# (None and empty containers are excluded: they mean "not given").
_JUNK = st.one_of(
    st.integers(-5, 5),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.binary(min_size=1, max_size=4),
    st.lists(st.integers(), min_size=1, max_size=3),
    st.builds(_Opaque),
    st.just(np.zeros(2)),
)


# ------------------------------------------------------------ EstimatorSpec


def _base_spec_args(mode: str) -> dict:
    if mode == ModeKeys.PREDICT:
        return {"predictions": tf.zeros([2])}
    args = {"loss": tf.constant(1.0)}
    if mode == ModeKeys.TRAIN:
        args["train_op"] = tf.constant(0)
    return args


class _Hook:
    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        return None


_HOOK_FIELDS = (
    "training_chief_hooks",
    "training_hooks",
    "evaluation_hooks",
    "prediction_hooks",
)


@st.composite
def _malformed_spec(draw):
    """(mode, kwargs, hint): one bad argument on top of a valid spec."""
    mode = draw(st.sampled_from(ALL_MODES))
    args = _base_spec_args(mode)
    junk = draw(_JUNK)
    case = draw(
        st.sampled_from(
            [
                "mode",
                "loss",
                "loss_shape",
                "loss_dtype",
                "train_op",
                "predictions",
                "predictions_key",
                "predictions_value",
                "metrics",
                "metric_value",
                "export_outputs",
                "export_value",
                "export_key",
                "hooks",
                "single_hook",
                "scaffold",
            ]
        )
    )
    if case == "mode":
        # 2.15 took any mode it could compare (a spec of mode 'bogus' ran in
        # the mode called); values compared element-wise are refused.
        junk = draw(st.sampled_from([np.zeros(2), [1], ("train",), {"a": 1}]))
        return junk, args, "mode"
    if case == "loss":
        return mode, {**args, "loss": junk}, "loss"
    if case == "loss_shape":
        shape = draw(st.lists(st.integers(2, 4), min_size=1, max_size=3))
        return mode, {**args, "loss": tf.zeros(shape)}, r"Loss must be scalar"
    if case == "loss_dtype":
        # Refused for training (2.15's TypeError when train() summarized it);
        # a bool loss evaluates, and PREDICT does not use the loss.
        loss = draw(st.sampled_from([tf.constant("x"), tf.constant(True)]))
        args = _base_spec_args(ModeKeys.TRAIN)
        return ModeKeys.TRAIN, {**args, "loss": loss}, r"loss must be a real number"
    if case == "train_op":
        return mode, {**args, "train_op": junk}, "train_op"
    if case == "predictions":
        return mode, {**args, "predictions": junk}, "predictions"
    if case == "predictions_key":
        # Any key is kept, as in 2.15; PREDICT's default signature, made of
        # the predictions, needs strings (or MultiHead's tuples of strings).
        key = draw(st.one_of(st.integers(), st.tuples(st.integers())))
        return (
            ModeKeys.PREDICT,
            {"predictions": {key: tf.zeros([2])}},
            "Prediction output key must be a string",
        )
    if case == "predictions_value":
        return (
            mode,
            {**args, "predictions": {"y": junk}},
            r"predictions\[y\] must be Tensor",
        )
    if case == "metrics":
        return mode, {**args, "eval_metric_ops": junk}, "eval_metric_ops"
    if case == "metric_value":
        value = draw(
            st.sampled_from(
                [
                    (junk, tf.constant(0)),
                    (tf.constant(0.0), junk),
                    (tf.constant(0.0),),
                    (tf.constant(0.0), tf.constant(0), tf.constant(0)),
                    tf.constant(0.0),
                    junk,
                ]
            )
        )
        return (
            mode,
            {**args, "eval_metric_ops": {"m": value}},
            r"eval_metric_ops\['m'\]",
        )
    if case == "export_outputs":
        return mode, {**args, "export_outputs": junk}, "export_outputs"
    if case == "export_value":
        value = draw(st.sampled_from([junk, tf.zeros([2]), {"y": tf.zeros([2])}]))
        return (
            mode,
            {**args, "export_outputs": {"serving_default": value}},
            r"export_outputs\['serving_default'\] must be an ExportOutput",
        )
    if case == "export_key":
        outputs = {1: PredictOutput({"y": tf.zeros([2])})}
        return mode, {**args, "export_outputs": outputs}, "export_outputs keys"
    field = draw(st.sampled_from(_HOOK_FIELDS))
    if case == "hooks":
        value = draw(st.sampled_from([junk, [junk], [_Hook(), junk], {"h": _Hook()}]))
        return mode, {**args, field: value}, field
    if case == "single_hook":
        return mode, {**args, field: _Hook()}, rf"Wrap it in a list: {field}=\[hook\]"
    return mode, {**args, "scaffold": junk}, "scaffold"


@given(_malformed_spec())
@example((np.array(["train", "eval"]), {"loss": tf.constant(1.0)}, "mode"))
@example(("infer", {"predictions": tf.zeros([2]), "scaffold": "s"}, "scaffold"))
@example(
    (
        "infer",
        {"predictions": tf.zeros([2]), "export_outputs": {"serving_default": 1}},
        "ExportOutput",
    )
)
def test_malformed_estimator_spec_is_refused(case):
    mode, kwargs, hint = case
    _raises_clear(lambda: EstimatorSpec(mode, **kwargs), hint, "got")


def test_mode_as_an_array_is_named():
    # `mode in (...)` on an array compared element-wise and raised numpy's
    # "truth value of an array is ambiguous".
    _raises_clear(
        lambda: EstimatorSpec(np.array(["train", "eval"]), loss=tf.constant(1.0)),
        r"EstimatorSpec mode must be .*got array\(\['train', 'eval'\]",
    )


def test_scaffold_of_another_type_is_refused():
    # It used to be stored and only failed (or was ignored) at run time.
    _raises_clear(
        lambda: EstimatorSpec(ModeKeys.PREDICT, predictions=tf.zeros([2]), scaffold=3),
        r"scaffold must be tf.train.Scaffold .*or None, got 3 \(type int\)",
    )


def test_export_output_of_another_type_is_refused_when_the_spec_is_made():
    # It used to be accepted here and refused only by export_saved_model.
    _raises_clear(
        lambda: EstimatorSpec(
            ModeKeys.PREDICT,
            predictions=tf.zeros([2]),
            export_outputs={"serving_default": tf.zeros([2])},
        ),
        r"export_outputs\['serving_default'\] must be an ExportOutput.*"
        r"got EagerTensor.*PredictOutput",
    )


@given(mode=st.sampled_from(ALL_MODES), with_extras=st.booleans())
def test_valid_estimator_spec_is_accepted(mode, with_extras):
    args = _base_spec_args(mode)
    if with_extras:
        args.update(
            predictions={"y": tf.zeros([2])},
            eval_metric_ops={"m": (tf.constant(0.0), tf.constant(0))},
            export_outputs={"serving_default": PredictOutput({"y": tf.zeros([2])})},
            training_hooks=[_Hook()],
            scaffold=tf.compat.v1.train.Scaffold(),
        )
    assert EstimatorSpec(mode, **args).mode == mode


# ------------------------------------------------------------ input_fn results

_X, _Y = make_data(num_examples=8)


@pytest.fixture(scope="module")
def estimator(tmp_path_factory):
    est = ke.Estimator(
        mlp_model_fn,
        model_dir=str(tmp_path_factory.mktemp("malformed_input")),
        params={"optimizer": "sgd"},
    )
    est.train(lambda: ({"x": _X}, _Y), steps=1)
    return est


def _dataset(element):
    return lambda: tf.data.Dataset.from_tensors(element)


_X_TENSOR = tf.constant(_X)
# (what input_fn returns, a pattern the message must match)
_MALFORMED_RESULTS = st.one_of(
    st.tuples(st.none(), st.just("input_fn returned NoneType")),
    st.tuples(st.text(max_size=5), st.just("input_fn returned str")),
    # A Python number is features, as in 2.15 (tests/base/test_exception_types_2_15.py).
    # A numpy array alone is features, as in 2.15 (tests/estimator/test_tuple_features.py).
    # [features, labels] as a list is a (features, labels) pair, as in 2.15.
    st.tuples(st.just([{"x": _X}, _Y, _Y]), st.just("input_fn returned list")),
    st.tuples(st.just(({"x": _X},)), st.just("input_fn returned tuple")),
    st.tuples(st.just(({"x": _X}, _Y, _Y)), st.just("input_fn returned tuple")),
    # Features keyed by ints are taken, as in 2.15; ints beside strings are not.
    st.tuples(
        st.dictionaries(st.integers(), st.just(_X), min_size=1, max_size=2).map(
            lambda features: ({**features, "x": _X}, _Y)
        ),
        st.just(r"features' keys must all be strings \(or all ints"),
    ),
    st.tuples(
        st.sampled_from(
            [
                ({"x": None}, _Y),
                ({"x": _Opaque()}, _Y),
                ({"x": {"nested": _Opaque()}}, _Y),
                ({"x": [[1.0], [1.0, 2.0]]}, _Y),
                ({"x": [1.0, "a"]}, _Y),
            ]
        ),
        st.just(r"features\['x'\]"),
    ),
    st.tuples(
        st.sampled_from([({"x": _X}, _Opaque()), ({"x": _X}, [[1], [1, 2]])]),
        st.just("labels"),
    ),
    # Numpy arrays as features, alone or in a tuple or list, are taken as
    # 2.15 took them (tests/estimator/test_tuple_features.py).
    st.tuples(
        st.sampled_from([((_X, "x"), _Y), ([_X, None], _Y)]),
        st.just("features must be a tensor, a dict of tensors or a tuple"),
    ),
)
_MALFORMED_DATASETS = st.sampled_from(
    [
        (_dataset((_X_TENSOR, _X_TENSOR, _X_TENSOR)), "tuple of 3 elements"),
        (_dataset((_X_TENSOR,)), "tuple of 1 elements"),
        # ((x1, x2), labels) is accepted, as in 2.15 (tests/estimator/test_tuple_features.py),
        # and so are features keyed by ints.
        (_dataset(({"x": None}, _Y)), r"features\['x'\] is None"),
    ]
)


def _run(estimator, method, input_fn):
    if method == "train":
        return estimator.train(input_fn, steps=1)
    if method == "evaluate":
        return estimator.evaluate(input_fn, steps=1)
    return next(estimator.predict(input_fn))


@given(
    method=st.sampled_from(["train", "evaluate", "predict"]),
    case=_MALFORMED_RESULTS,
)
@example(method="train", case=({"x": None}, r"features\['x'\] is None"))
def test_malformed_input_fn_result_is_refused(estimator, method, case):
    result, hint = case
    _raises_clear(lambda: _run(estimator, method, lambda: result), hint)


@given(
    method=st.sampled_from(["train", "evaluate", "predict"]), case=_MALFORMED_DATASETS
)
def test_malformed_input_fn_dataset_is_refused(estimator, method, case):
    input_fn, hint = case
    _raises_clear(lambda: _run(estimator, method, input_fn), hint)


def test_unconvertible_feature_is_named(estimator):
    # tf.data's own "Can't convert non-rectangular Python sequence" did not say
    # which feature, nor that input_fn gave it.
    _raises_clear(
        lambda: estimator.train(lambda: ({"x": [[1.0], [1.0, 2.0]]}, _Y), steps=1),
        r"input_fn returned features\['x'\] that cannot be made into tensors: "
        r"\[\[1.0\], \[1.0, 2.0\]\] \(type list\).*non-rectangular",
    )


def test_none_feature_is_named(estimator):
    # It used to fail in the model with "'NoneType' object has no attribute
    # 'shape'".
    _raises_clear(
        lambda: estimator.train(lambda: ({"x": None}, _Y), steps=1),
        r"features\['x'\] is None.*Remove the key 'x'",
    )


def test_input_fn_with_parameters_the_estimator_cannot_pass(estimator):
    def input_fn(data_dir, mode):
        return {"x": _X}, _Y

    _raises_clear(
        lambda: estimator.train(input_fn, steps=1),
        r"requires parameters \['data_dir'\], but the Estimator only passes "
        r"\['config', 'mode', 'params'\].*functools.partial",
    )


@pytest.mark.parametrize(
    "input_fn",
    [
        lambda: ({"x": _X}, _Y),
        lambda mode, params, config: ({"x": _X}, _Y),
        lambda mode, batch=4: ({"x": _X[:batch]}, _Y[:batch]),
        functools.partial(lambda data, mode: ({"x": data}, _Y), _X),
        lambda: tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).batch(4),
    ],
)
def test_valid_input_fn_forms_are_accepted(estimator, input_fn):
    assert "loss" in estimator.evaluate(input_fn, steps=1)


# ------------------------------------------------------------ RunConfig

_NON_INTEGERS = st.one_of(
    st.text(max_size=3),
    st.booleans(),
    st.floats(allow_nan=True),
    st.lists(st.integers(), max_size=2),
    st.builds(_Opaque),
)
_NON_NUMBERS = st.one_of(
    st.text(max_size=3),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.builds(_Opaque),
)
_TOO_LARGE = st.integers(min_value=2**63, max_value=2**80)


def _negative_steps():
    return st.one_of(_NON_INTEGERS, st.integers(max_value=-1), _TOO_LARGE)


_BAD_RUN_CONFIG = {
    "model_dir": st.one_of(
        st.integers(),
        st.booleans(),
        st.just(""),
        st.just("a\x00b"),
        st.lists(st.text(max_size=2), max_size=2),
        st.builds(_Opaque),
    ),
    "tf_random_seed": st.one_of(_NON_INTEGERS, _TOO_LARGE, st.just(-(2**63) - 1)),
    "save_summary_steps": _negative_steps(),
    "save_checkpoints_steps": _negative_steps(),
    "save_checkpoints_secs": st.one_of(
        _NON_NUMBERS, st.floats(max_value=-1e-3), st.just(float("nan"))
    ),
    "session_config": st.one_of(_JUNK, st.just({"allow_soft_placement": True})),
    "keep_checkpoint_max": _negative_steps(),
    "keep_checkpoint_every_n_hours": st.one_of(
        _NON_NUMBERS, st.floats(max_value=0), st.just(float("nan"))
    ),
    "log_step_count_steps": st.one_of(_NON_INTEGERS, st.integers(max_value=0)),
    "train_distribute": st.one_of(_JUNK, st.just("mirrored")),
    "eval_distribute": st.one_of(_JUNK, st.just(tf.distribute.get_strategy)),
    "device_fn": st.one_of(_JUNK, st.just(lambda device: "/cpu:0")),
    "protocol": st.one_of(
        st.text(max_size=5).filter(lambda p: p not in ("grpc", "grpc+verbs")),
        st.integers(),
        st.just(np.array(["grpc", "grpc"])),
    ),
    "experimental_distribute": st.one_of(st.integers(), st.text(max_size=3)),
    "experimental_max_worker_delay_secs": st.one_of(_NON_INTEGERS, _TOO_LARGE),
    "session_creation_timeout_secs": st.one_of(
        _NON_NUMBERS, st.floats(max_value=0), st.just(float("nan"))
    ),
    "checkpoint_save_graph_def": st.one_of(
        st.integers(), st.text(max_size=2), st.none()
    ),
    "steps_per_loop": st.one_of(_NON_INTEGERS, st.integers(max_value=0), _TOO_LARGE),
}


@st.composite
def _bad_run_config_argument(draw):
    name = draw(st.sampled_from(sorted(_BAD_RUN_CONFIG)))
    return name, draw(_BAD_RUN_CONFIG[name])


@given(_bad_run_config_argument(), st.booleans())
@example(("save_checkpoints_secs", float("nan")), False)
@example(("keep_checkpoint_every_n_hours", float("nan")), True)
@example(("tf_random_seed", 2**70), False)
@example(("save_checkpoints_steps", 2**63), True)
@example(("protocol", np.array(["grpc", "grpc"])), False)
@example(("model_dir", "a\x00b"), False)
def test_malformed_run_config_argument_is_refused(argument, through_replace):
    name, value = argument
    if through_replace:
        if name == "experimental_distribute":
            return  # not replaceable on its own terms: it sets two strategies
        call = lambda: RunConfig().replace(**{name: value})  # noqa: E731
    else:
        call = lambda: RunConfig(**{name: value})  # noqa: E731
    # The message names the argument, and shows the value (its repr or type).
    error = _raises_clear(call, re.escape(name))
    message = str(error)
    shown = re.escape(repr(value)[:20]) + "|" + type(value).__name__
    assert re.search(shown, message), message


@given(steps=st.integers(0, 1000), secs=st.floats(0, 1000))
def test_both_checkpoint_cadences_are_refused(steps, secs):
    _raises_clear(
        lambda: RunConfig(save_checkpoints_steps=steps, save_checkpoints_secs=secs),
        r"`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set\. "
        rf"Got save_checkpoints_steps={steps!r}",
    )


def test_model_dir_bytes_that_are_not_utf8_are_read_as_the_os_would():
    # bytes.decode() raised UnicodeDecodeError: "'utf-8' codec can't decode".
    assert RunConfig(model_dir=b"/tmp/\xff").model_dir == "/tmp/\udcff"


def test_nan_seconds_are_refused():
    _raises_clear(
        lambda: RunConfig(save_checkpoints_secs=float("nan")),
        r"save_checkpoints_secs must be a number, got nan",
    )


def test_seed_beyond_int64_is_refused():
    _raises_clear(
        lambda: RunConfig(tf_random_seed=2**64),
        r"tf_random_seed must fit in a 64-bit integer, got 18446744073709551616",
    )


@given(
    steps=st.one_of(st.none(), st.integers(0, 10**6)),
    secs=st.one_of(st.none(), st.integers(0, 10**6), st.floats(0, 1e6)),
    seed=st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
    keep=st.one_of(st.none(), st.integers(0, 100)),
    hours=st.floats(1e-3, 1e4),
    log_steps=st.one_of(st.none(), st.integers(1, 10**4)),
    protocol=st.sampled_from([None, "grpc", "grpc+verbs"]),
    steps_per_loop=st.one_of(st.none(), st.integers(1, 1000)),
    graph_def=st.booleans(),
)
def test_valid_run_config_is_accepted(
    steps, secs, seed, keep, hours, log_steps, protocol, steps_per_loop, graph_def
):
    if steps is not None:
        secs = None
    config = RunConfig(
        tf_random_seed=seed,
        save_checkpoints_steps=steps,
        save_checkpoints_secs=secs,
        keep_checkpoint_max=keep,
        keep_checkpoint_every_n_hours=hours,
        log_step_count_steps=log_steps,
        protocol=protocol,
        steps_per_loop=steps_per_loop,
        checkpoint_save_graph_def=graph_def,
    )
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (
        steps,
        secs,
    )
    assert (config.tf_random_seed, config.keep_checkpoint_max) == (seed, keep)
    assert config.replace(steps_per_loop=steps_per_loop).protocol == protocol


# ------------------------------------------------------------ TF_CONFIG

_BASE_TF_CONFIG = {
    "cluster": {
        "chief": ["host0:2222"],
        "worker": ["host1:2222", "host2:2222"],
        "ps": ["host3:2222"],
    },
    "task": {"type": "worker", "index": 1},
}
_JOBS = ("chief", "master", "worker", "ps")
_JSON_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
_NOT_ADDRESSES = st.one_of(
    st.text(max_size=8).filter(lambda a: not re.fullmatch(r".+:[0-9]+", a)),
    st.integers(0, 2**20).filter(lambda p: p == 0 or p > 65535).map(lambda p: f"h:{p}"),
    st.sampled_from(["h:\u00b2", "h:-1", "h:22a", ":2222", "h:"]),
)


def _with(config: dict, path: tuple, value) -> dict:
    config = json.loads(json.dumps(config))
    target = config
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return config


_DELETE = object()


@st.composite
def _malformed_tf_config(draw):
    """A TF_CONFIG string that is wrong in one place, and the field it names."""
    base = _BASE_TF_CONFIG
    case = draw(st.integers(0, 17))
    if case == 0:
        text = json.dumps(base)
        return text[: draw(st.integers(1, len(text) - 1))], "not valid JSON"
    if case == 1:
        value = draw(_JSON_JUNK.filter(lambda v: not isinstance(v, dict)))
        return json.dumps(value), "expected a JSON object"
    if case == 2:
        value = draw(
            _JSON_JUNK.filter(lambda v: v is not None and not isinstance(v, dict))
        )
        return json.dumps(_with(base, ("cluster",), value)), '"cluster"'
    if case == 3:
        job = draw(st.text(max_size=6).filter(lambda j: j not in _JOBS))
        return json.dumps(_with(base, ("cluster", job), ["h9:1"])), '"cluster"'
    if case == 4:
        job = draw(st.sampled_from(["chief", "worker", "ps"]))
        value = draw(
            st.one_of(
                _JSON_JUNK.filter(lambda v: not isinstance(v, list)),
                st.lists(st.integers(), min_size=1, max_size=2),
            )
        )
        return json.dumps(
            _with(base, ("cluster", job), value)
        ), f'"cluster"\\["{job}"\\]'
    if case == 5:
        # Any other address string is taken, as tf.estimator 2.15 took it
        # (`test_addresses_are_checked_where_the_cluster_is_reached`).
        return (
            json.dumps(_with(base, ("cluster", "ps", 0), "")),
            r'"cluster"\["ps"\]',
        )
    if case == 6:
        return json.dumps(_with(base, ("task",), _DELETE)), r'"task": it is missing'
    if case == 7:
        value = draw(
            _JSON_JUNK.filter(lambda v: v is not None and not isinstance(v, dict))
        )
        return json.dumps(_with(base, ("task",), value)), '"task"'
    if case == 8:
        value = draw(
            st.one_of(
                _JSON_JUNK.filter(lambda v: not isinstance(v, str)),
                st.text(max_size=6).filter(lambda t: t not in _JOBS),
            )
        )
        return json.dumps(_with(base, ("task", "type"), value)), r'"task"\["type"\]'
    if case == 9:
        value = draw(
            st.one_of(
                st.integers(max_value=-1),
                st.integers(min_value=2),  # the worker job has two tasks
                st.floats(allow_nan=False),
                st.text(max_size=3).filter(
                    lambda t: not (t.isascii() and t.strip().isdigit())
                ),
                st.sampled_from(["\u00b2", [0], {"i": 0}, True]),
                st.just(_DELETE),
            )
        )
        return json.dumps(_with(base, ("task", "index"), value)), r'"task"\["index"\]'
    if case == 10:
        config = _with(base, ("cluster", "ps", 0), "host1:2222")
        return json.dumps(config), "same address"
    if case == 11:
        config = _with(base, ("cluster", "chief"), ["host8:1", "host9:1"])
        return json.dumps(config), r'"cluster"\["chief"\]'
    if case == 12:
        return json.dumps(_with(base, ("cluster", "master"), ["host9:1"])), '"master"'
    if case == 13:
        return json.dumps(
            _with(base, ("cluster", "evaluator"), ["host9:1"])
        ), "evaluator"
    if case == 14:
        value = draw(_JSON_JUNK.filter(lambda v: v not in ("cloud", "google", None)))
        return json.dumps(_with(base, ("environment",), value)), '"environment"'
    if case == 15:
        key = draw(st.sampled_from(["rpc_layer", "model_dir"]))
        value = draw(
            _JSON_JUNK.filter(
                lambda v: v is not None and not (isinstance(v, str) and v)
            )
        )
        return json.dumps(_with(base, (key,), value)), f'"{key}"'
    if case == 16:
        key = draw(st.sampled_from(["session_master", "eval_session_master"]))
        value = draw(_JSON_JUNK.filter(lambda v: not isinstance(v, str)))
        return json.dumps(_with(base, (key,), value)), f'"{key}"'
    value = draw(_JSON_JUNK.filter(lambda v: v is not None and not isinstance(v, dict)))
    return json.dumps(_with(base, ("service",), value)), '"service"'


@given(_malformed_tf_config())
@example(('{"cluster": [], "task": {"type": "worker", "index": 0}}', '"cluster"'))
@example(
    (
        '{"cluster": {"worker": [""]}, "task": {"type": "worker", "index": 0}}',
        "host:port",
    )
)
@example(
    (
        '{"cluster": {"worker": ["h:1"]}, "task": {"type": "worker", "index": "\\u00b2"}}',
        "index",
    )
)
def test_malformed_tf_config_is_refused(monkeypatch, case):
    text, hint = case
    monkeypatch.setenv("TF_CONFIG", text)
    _raises_clear(RunConfig, "Invalid TF_CONFIG", hint)


def test_empty_cluster_of_another_type_is_refused(monkeypatch):
    # `cluster or {}` read a [] or 0 as "no cluster" and ran locally.
    monkeypatch.setenv("TF_CONFIG", '{"cluster": [], "task": {"type": "worker"}}')
    _raises_clear(
        RunConfig, r'Invalid TF_CONFIG "cluster": expected an object.*got \[\]'
    )


def test_port_of_non_ascii_digits_is_refused(monkeypatch):
    # "²".isdigit() is true, and int("²") raised "invalid literal for int()".
    text = json.dumps(
        {"cluster": {"worker": ["h:\u00b2"]}, "task": {"type": "worker", "index": 0}}
    )
    _raises_clear(
        lambda: _parse_tf_config(text, check_addresses=True),
        r"'h:²' is not a 'host:port' address",
    )


@given(_NOT_ADDRESSES.filter(bool))
def test_addresses_are_checked_where_the_cluster_is_reached(monkeypatch, address):
    # tf.estimator 2.15's RunConfig took any address; the strategy helper,
    # which connects to the cluster, checks them first.
    text = json.dumps(_with(_BASE_TF_CONFIG, ("cluster", "ps", 0), address))
    monkeypatch.setenv("TF_CONFIG", text)
    assert RunConfig().cluster_spec.as_dict()["ps"][0] == address
    _raises_clear(
        lambda: _parse_tf_config(text, check_addresses=True),
        "Invalid TF_CONFIG",
        r'"cluster"\["ps"\]',
    )


@given(
    has_chief=st.booleans(),
    num_workers=st.integers(0, 3),
    num_ps=st.integers(0, 2),
    pick=st.integers(0, 100),
    rpc_layer=st.sampled_from([None, "grpc"]),
)
def test_valid_tf_config_is_accepted(
    monkeypatch, has_chief, num_workers, num_ps, pick, rpc_layer
):
    if not has_chief and num_workers == 0:
        num_workers = 1
    port = iter(range(2000, 3000))
    cluster = {}
    if has_chief:
        cluster["chief"] = [f"host:{next(port)}"]
    for job, count in (("worker", num_workers), ("ps", num_ps)):
        if count:
            cluster[job] = [f"host:{next(port)}" for _ in range(count)]
    tasks = [(job, index) for job in cluster for index in range(len(cluster[job]))]
    task_type, task_id = tasks[pick % len(tasks)]
    tf_config = {"cluster": cluster, "task": {"type": task_type, "index": task_id}}
    if rpc_layer:
        tf_config["rpc_layer"] = rpc_layer
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))
    config = RunConfig()
    assert (config.task_type, config.task_id) == (task_type, task_id)
    assert config.num_ps_replicas == num_ps


def test_tf1_layers_without_install_name_the_fix(tmp_path):
    # TensorFlow 2.21 says only "`dense` is not available with Keras 3."
    def model_fn(features, labels, mode):
        logits = tf.compat.v1.layers.dense(features["x"], 3)
        loss = tf.reduce_mean(tf.square(logits))
        return EstimatorSpec(mode, loss=loss, train_op=tf.no_op())

    x, y = make_data(16)
    est = ke.Estimator(model_fn, str(tmp_path))
    with pytest.raises(AttributeError) as raised:
        est.train(input_fn(x, y), steps=1)
    message = str(raised.value)
    assert "`dense` is not available with Keras 3." in message
    assert "keras_estimator.compat.layers" in message
    assert "keras_estimator.install()" in message
