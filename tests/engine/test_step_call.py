"""One-step calls run single-threaded where the graph allows, with equal results."""

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator._src.engine import step_call as _step_call
from tests._models import input_fn, make_data, mlp_model_fn


def _graph(function, *args):
    return tf.function(function, autograph=False).get_concrete_function(*args).graph


def test_plain_graph_allows_a_single_thread():
    var = tf.Variable(1.0)
    assert _step_call.allows_single_thread(_graph(lambda: var.assign_add(var * 2.0)))


def test_control_flow_needs_the_default_executor():
    var = tf.Variable(1.0)

    def with_cond(x):
        return tf.cond(x > 0, lambda: var.assign_add(x), lambda: var.read_value())

    def with_loop(n):
        return tf.while_loop(lambda i: i < n, lambda i: i + 1, [tf.constant(0)])

    assert not _step_call.allows_single_thread(_graph(with_cond, tf.constant(1.0)))
    assert not _step_call.allows_single_thread(_graph(with_loop, tf.constant(3)))


def test_ops_on_another_device_need_the_default_executor():
    # The test process has two logical CPUs (tests/conftest.py).
    def on_second_cpu(x):
        with tf.device("/cpu:1"):
            return x * 2.0

    def on_first_cpu(x):
        with tf.device("/cpu:0"):
            return x * 2.0

    assert not _step_call.allows_single_thread(_graph(on_second_cpu, tf.constant(1.0)))
    assert _step_call.allows_single_thread(_graph(on_first_cpu, tf.constant(1.0)))


def test_single_threaded_call_gives_the_default_executors_result():
    var = tf.Variable(tf.ones([8, 8]))

    def step(x):
        var.assign(tf.matmul(var, x) / 8.0 + 1.0)
        return tf.reduce_sum(var)

    concrete = tf.function(step, autograph=False).get_concrete_function(
        tf.TensorSpec([8, 8])
    )
    x = tf.constant(np.random.default_rng(0).normal(size=(8, 8)).astype("float32"))
    single = _step_call.StepCall(concrete)
    assert single.single_threaded
    default = _step_call.StepCall(concrete, single_threaded=False)
    var.assign(tf.ones([8, 8]))
    expected = [float(default(x)) for _ in range(3)]
    var.assign(tf.ones([8, 8]))
    assert [float(single(x)) for _ in range(3)] == expected


def test_refused_graph_falls_back_having_run_nothing():
    """Forced onto the single-threaded executor, a graph with control flow is
    refused before any op runs; the call then runs once, on the default one."""
    counter = tf.Variable(0)
    iterator = iter(tf.data.Dataset.range(10))

    def step(iterator):
        value = iterator.get_next()
        counter.assign_add(1)
        return tf.cond(value > 100, lambda: value * 2, lambda: value)

    concrete = tf.function(step, autograph=False).get_concrete_function(iterator)
    call = _step_call.StepCall(concrete, single_threaded=True)
    assert int(call(iterator)) == 0
    assert not call.single_threaded
    assert int(counter.numpy()) == 1
    assert int(call(iterator)) == 1


class _FetchEveryStep(ke.SessionRunHook):
    """Fetches the loss on every step, so each step is its own call."""

    def __init__(self):
        self.losses = []

    def before_run(self, run_context):
        return ke.SessionRunArgs("the_loss:0")

    def after_run(self, run_context, run_values):
        self.losses.append(float(run_values.results))


def _named_loss_model_fn(features, labels, mode, params):
    spec = mlp_model_fn(features, labels, mode, params)
    if spec.loss is None:
        return spec
    return spec._replace(loss=tf.identity(spec.loss, name="the_loss"))


@given(
    optimizer=st.sampled_from(["adam", "sgd", "adagrad"]),
    batch_size=st.sampled_from([4, 8]),
    steps=st.integers(1, 10),
    seed=st.integers(0, 1000),
)
def test_single_threaded_steps_equal_fused_steps(tmp_path_factory, optimizer, batch_size, steps, seed):
    x, y = make_data(24, seed=seed)
    params = {"hidden": [6], "optimizer": optimizer}
    weights = []
    for hooks in ([], [_FetchEveryStep()]):
        estimator = ke.Estimator(
            _named_loss_model_fn,
            str(tmp_path_factory.mktemp("run")),
            params=params,
            config=ke.RunConfig(tf_random_seed=seed),
        )
        estimator.train(input_fn(x, y, batch_size=batch_size), steps=steps, hooks=hooks)
        weights.append(
            {n: estimator.get_variable_value(n) for n in estimator.get_variable_names()}
        )
        if hooks:
            assert len(hooks[0].losses) == steps
            calls = estimator._model._steps._fetching_functions.values()
            assert calls and all(call.single_threaded for call in calls)
    assert weights[0].keys() == weights[1].keys()
    for name in weights[0]:
        np.testing.assert_array_equal(weights[1][name], weights[0][name], err_msg=name)


def test_a_first_fetching_step_runs_the_shared_trace_as_it_is(tmp_path, monkeypatch):
    # train(steps=1), a cold start, compiles no function around the step it
    # already traced: the first fetching step calls that trace on the next
    # element; the compiled call is made when the same fetches come again.
    compiled = []
    step_call_init = _step_call.StepCall.__init__

    def spy(self, concrete, single_threaded=None):
        compiled.append(concrete)
        step_call_init(self, concrete, single_threaded)

    monkeypatch.setattr(_step_call.StepCall, "__init__", spy)
    x, y = make_data(24)
    hook = _FetchEveryStep()
    estimator = ke.Estimator(
        _named_loss_model_fn,
        str(tmp_path),
        params={"hidden": [6], "optimizer": "adam"},
        config=ke.RunConfig(tf_random_seed=1),
    )
    estimator.train(input_fn(x, y, batch_size=8), steps=1, hooks=[hook])
    assert compiled == []
    assert len(hook.losses) == 1
    assert estimator.get_variable_value("global_step") == 1
    estimator.train(input_fn(x, y, batch_size=8), steps=2, hooks=[hook])
    assert compiled
    assert len(hook.losses) == 3


def _nested_step():
    var = tf.Variable(1.0)

    def step(iterator):
        value = tf.cast(iterator.get_next(), tf.float32)
        var.assign_add(value)
        return {"b": {"d": var * 2.0, "c": value}, "a": var.read_value(), "e": [value + 1.0]}

    return var, step


def test_a_step_called_on_flat_tensors_returns_what_the_traced_call_returns():
    var, step = _nested_step()
    iterator = iter(tf.data.Dataset.range(100))
    concrete = tf.function(step, autograph=False).get_concrete_function(iterator)
    call = _step_call.StepCall(concrete)
    assert call._pack is not None  # its outputs are put back by position
    got = [tf.nest.map_structure(lambda t: t.numpy(), call(iterator)) for _ in range(3)]
    with tf.GradientTape():  # a tape could record: TensorFlow's own call path
        got.append(tf.nest.map_structure(lambda t: t.numpy(), call(iterator)))
    var.assign(1.0)
    iterator = iter(tf.data.Dataset.range(100))
    expected = [
        tf.nest.map_structure(
            lambda t: t.numpy(), _step_call.function_calls.call_traced(concrete, iterator)
        )
        for _ in range(4)
    ]
    assert got == expected
    assert list(got[0]) == ["a", "b", "e"] and list(got[0]["b"]) == ["c", "d"]


def test_a_step_call_keeps_no_iterator_resource_past_the_iterator():
    """The flat inputs of the last iterator are dropped when it is freed."""
    _, step = _nested_step()
    iterator = iter(tf.data.Dataset.range(100))
    concrete = tf.function(step, autograph=False).get_concrete_function(iterator)
    call = _step_call.StepCall(concrete)
    call(iterator)
    call(iterator)
    assert call._cached is not None
    del iterator
    assert call._cached is None


def _flat_call(function, *specs):
    concrete = tf.function(function, autograph=False).get_concrete_function(*specs)
    return concrete, _step_call.function_calls.FlatCall(concrete)


def _must_be_positive(x):
    checked = tf.debugging.check_numerics(tf.math.log(x), "log of the input")
    return checked * 2.0


def test_a_direct_call_raises_the_error_tensorflow_s_own_call_raises():
    concrete, flat = _flat_call(_must_be_positive, tf.TensorSpec([2]))
    assert flat.usable and flat._direct is not None  # the op is executed directly
    good = tf.constant([1.0, 4.0])
    assert flat([good])[0].numpy().tolist() == concrete(good).numpy().tolist()
    bad = tf.constant([1.0, -1.0])
    with pytest.raises(tf.errors.InvalidArgumentError) as direct:
        flat([bad])
    with pytest.raises(tf.errors.InvalidArgumentError) as own:
        concrete(bad)
    # Both carry the Python line that made the failing op.
    assert "log of the input" in direct.value.message
    assert "test_step_call.py" in direct.value.message
    assert direct.value.message == own.value.message


def test_a_direct_call_runs_on_the_executor_the_caller_asks_for():
    # The single-threaded executor refuses low-level control flow: asking
    # for it must reach the op, also after a call on the default executor.
    def with_loop(n):
        return tf.while_loop(lambda i: i < n, lambda i: i + 1, [tf.constant(0)])

    _, flat = _flat_call(with_loop, tf.TensorSpec([], tf.int32))
    assert flat._direct is not None
    assert int(flat([tf.constant(3)])[0]) == 3
    with pytest.raises((tf.errors.FailedPreconditionError, tf.errors.UnimplementedError)) as refused:
        flat([tf.constant(3)], single_threaded=True)
    assert _step_call.REFUSAL in str(refused.value)
    assert int(flat([tf.constant(5)])[0]) == 5


def test_a_call_returning_a_resource_or_inside_a_trace_goes_through_tensorflow():
    var = tf.Variable(3.0)
    _, handle_call = _flat_call(lambda: var.handle)
    assert handle_call.usable and handle_call._direct is None
    (handle,) = handle_call([])
    assert handle.dtype == tf.resource

    _, flat = _flat_call(lambda x: x * var, tf.TensorSpec([]))

    @tf.function(autograph=False)
    def outer(x):
        return flat([x])[0] + 1.0

    assert float(outer(tf.constant(2.0))) == 7.0
    assert float(flat([tf.constant(2.0)])[0]) == 6.0
