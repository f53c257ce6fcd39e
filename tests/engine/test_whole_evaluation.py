"""evaluate() with nothing watching its batches runs in one compiled call.

The reset of the metrics, every batch (up to `steps`) and the final metric
values run in one compiled call per `MAX_FUSED_STEPS` batches
(`engine/whole_evaluation.py`) instead of Keras' `evaluate`. The results
must be those of the per-batch path, which a hook forces: the same keys,
types and values bit for bit, the same steps counted.
"""

import tempfile
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator._src.engine import whole_evaluation
from keras_estimator._src.engine.model_fn_model import ModelFnModel
from keras_estimator.compat import layers
from tests._models import make_data

CALLS = {"model_fn": 0}


def metrics_model_fn(features, labels, mode):
    """An MLP whose EVAL spec has metrics of every kind the loop reads."""
    CALLS["model_fn"] += 1
    logits = layers.dense(layers.dense(features["x"], 6, activation=tf.nn.relu), 3)
    classes = tf.argmax(logits, 1)
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions={"classes": classes})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == ke.ModeKeys.EVAL:
        probabilities = tf.nn.softmax(logits)
        keras_mean = keras.metrics.Mean(name="keras_mean")
        keras_mean.update_state(tf.reduce_max(probabilities, 1))
        return ke.EstimatorSpec(
            mode,
            loss=loss,
            eval_metric_ops={
                "accuracy": tf.compat.v1.metrics.accuracy(labels, classes),
                "mean_logit": tf.compat.v1.metrics.mean(logits),
                "auc": tf.compat.v1.metrics.auc(
                    tf.equal(labels, 0), probabilities[:, 0], num_thresholds=20
                ),
                "precision_recall": (
                    (
                        tf.compat.v1.metrics.precision(tf.equal(labels, 1), tf.equal(classes, 1))[0],
                        tf.compat.v1.metrics.recall(tf.equal(labels, 1), tf.equal(classes, 1))[0],
                    ),
                    tf.no_op(),
                ),
                "keras_mean": keras_mean,
            },
        )
    optimizer = tf.compat.v1.train.AdamOptimizer(0.05)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _trained(model_fn, steps):
    """An Estimator of `model_fn` trained `steps` steps, its model_dir kept meanwhile."""
    x, y = make_data(num_examples=48, seed=3)
    with tempfile.TemporaryDirectory() as model_dir:
        est = ke.Estimator(
            model_fn,
            model_dir=model_dir,
            config=ke.RunConfig(tf_random_seed=5, save_summary_steps=None),
        )
        est.train(
            lambda: tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(8),
            steps=steps,
        )
        yield est


@pytest.fixture(scope="module")
def estimator():
    yield from _trained(metrics_model_fn, steps=12)


def eval_input_fn(num_examples, batch_size, seed=7):
    x, y = make_data(num_examples=max(num_examples, 1), seed=seed)
    x, y = x[:num_examples], y[:num_examples]

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(batch_size)

    return input_fn


class _Spy:
    """Counts the one-call evaluations that ran (returned results)."""

    def __init__(self, monkeypatch):
        self.ran = 0
        original = ModelFnModel.evaluate_in_one_call

        def spied(model, dataset, steps):
            outcome = original(model, dataset, steps)
            self.ran += outcome is not None
            return outcome

        monkeypatch.setattr(ModelFnModel, "evaluate_in_one_call", spied)


def _evaluate(est, input_fn, steps, hooks=None):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = est.evaluate(input_fn, steps=steps, hooks=hooks)
    return results, [str(w.message) for w in caught]


def _assert_same(one_call, per_batch):
    assert list(one_call) == list(per_batch)
    for key, value in per_batch.items():
        got = one_call[key]
        assert type(got) is type(value), key
        flat_got, flat_want = tf.nest.flatten(got), tf.nest.flatten(value)
        assert [type(v) for v in flat_got] == [type(v) for v in flat_want], key
        for a, b in zip(flat_got, flat_want, strict=True):
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape, key
            assert a.tobytes() == b.tobytes(), (key, a, b)


@given(
    num_examples=st.integers(0, 40),
    batch_size=st.integers(1, 9),
    steps=st.one_of(st.none(), st.integers(1, 12)),
    chunk=st.sampled_from([1, 2, 3, 1000]),
)
def test_one_call_evaluation_equals_the_per_batch_path(
    estimator, monkeypatch, num_examples, batch_size, steps, chunk
):
    # `chunk` stands for MAX_FUSED_STEPS: evaluations longer than it take
    # several calls, the metrics reset only before the first.
    spy = _Spy(monkeypatch)
    monkeypatch.setattr(whole_evaluation, "MAX_FUSED_STEPS", chunk)
    input_fn = eval_input_fn(num_examples, batch_size)
    one_call, one_call_warnings = _evaluate(estimator, input_fn, steps)
    assert spy.ran == 1
    per_batch, per_batch_warnings = _evaluate(
        estimator, input_fn, steps, hooks=[ke.SessionRunHook()]
    )
    assert spy.ran == 1  # a hook sees the batches: Keras' evaluate ran
    _assert_same(one_call, per_batch)
    assert one_call_warnings == per_batch_warnings
    batches = -(-num_examples // batch_size)
    if batches == 0:
        # As 2.15: the metrics as initialized and a zero loss.
        assert one_call["loss"] == 0.0 and len(one_call) > 2


def test_repeated_evaluations_trace_nothing_again(estimator, monkeypatch):
    spy = _Spy(monkeypatch)
    model = estimator._get_model()
    first = estimator.evaluate(eval_input_fn(20, 4))
    functions = dict(model._whole_evaluation._functions)
    calls = CALLS["model_fn"]
    for seed in (1, 2, 3):
        again = estimator.evaluate(eval_input_fn(20, 4, seed=seed))
        assert set(again) == set(first)
    assert spy.ran == 4
    assert CALLS["model_fn"] == calls
    assert model._whole_evaluation._functions == functions
    assert all(
        function.graph is functions[key][0].graph
        for key, (function, *_) in model._whole_evaluation._functions.items()
    )


def test_a_keras_callback_or_evaluation_hook_gets_every_batch(estimator, monkeypatch):
    spy = _Spy(monkeypatch)
    batches = []

    class Batches(keras.callbacks.Callback):
        def on_test_batch_end(self, batch, logs=None):
            batches.append(batch)

    estimator.evaluate(eval_input_fn(20, 4), callbacks=[Batches()])
    assert spy.ran == 0
    assert len(batches) == 5


def test_python_logs_follow_keras_conversion():
    from keras.src.utils.python_utils import pythonify_logs

    logs = {
        "b": tf.constant(1.5),
        "a": tf.constant([2.0]),
        "n": {"inner": tf.constant(3, tf.int64)},
        "t": (tf.constant(1.0), tf.constant(2.0)),
        "s": tf.constant(b"text"),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ours, keras_own = whole_evaluation.python_logs(logs), pythonify_logs(logs)
    assert list(ours) == list(keras_own)
    for key, value in keras_own.items():
        assert type(ours[key]) is type(value), key
        assert repr(ours[key]) == repr(value), key


class _ExecutorSpy:
    """Records, for each one-call evaluation function called, whether it ran on one thread."""

    def __init__(self, monkeypatch):
        self.single_threaded = []
        original = whole_evaluation.function_calls.call_traced

        def spied(concrete, *args, single_threaded=False):
            if "inference_evaluation" in str(concrete.name):  # `_compile`'s functions
                self.single_threaded.append(single_threaded)
            return original(concrete, *args, single_threaded=single_threaded)

        monkeypatch.setattr(whole_evaluation.function_calls, "call_traced", spied)


def test_a_cpu_evaluation_runs_its_batches_on_one_thread(estimator, monkeypatch):
    # The loop's control flow stays functional and every function it calls
    # allows TensorFlow's single-threaded executor: no op of the batches is
    # handed to the inter-op thread pool.
    spy = _ExecutorSpy(monkeypatch)
    monkeypatch.setattr(whole_evaluation, "MAX_FUSED_STEPS", 2)
    results = estimator.evaluate(eval_input_fn(20, 4))
    assert spy.single_threaded == [True, True, True]
    per_batch = estimator.evaluate(eval_input_fn(20, 4), hooks=[ke.SessionRunHook()])
    _assert_same(results, per_batch)


def cond_model_fn(features, labels, mode):
    """metrics_model_fn on features through a tf.cond (lowered control flow in the step)."""
    x = features["x"]
    x = tf.cond(tf.reduce_sum(x) > -1e9, lambda: x, lambda: x * 2.0)
    return metrics_model_fn({"x": x}, labels, mode)


@pytest.fixture(scope="module")
def cond_estimator():
    yield from _trained(cond_model_fn, steps=4)


def test_a_step_with_lowered_control_flow_runs_on_the_default_executor(
    cond_estimator, monkeypatch
):
    spy = _ExecutorSpy(monkeypatch)
    results = cond_estimator.evaluate(eval_input_fn(20, 4))
    assert spy.single_threaded == [False]
    per_batch = cond_estimator.evaluate(eval_input_fn(20, 4), hooks=[ke.SessionRunHook()])
    _assert_same(results, per_batch)


def test_an_evaluation_refused_one_thread_starts_again_with_its_metrics_reset(
    cond_estimator, monkeypatch
):
    # Should TensorFlow refuse the single-threaded executor once the loop
    # has begun (a body function is instantiated after the first batch is
    # read), the evaluation runs again from a new iterator, its v1 metric
    # variables reset, on the default executor: the same results.
    per_batch = cond_estimator.evaluate(eval_input_fn(20, 4, seed=9), hooks=[ke.SessionRunHook()])
    monkeypatch.setattr(whole_evaluation, "runs_on_one_thread", lambda graph: True)
    model = cond_estimator._get_model()
    monkeypatch.setattr(model, "_whole_evaluation", whole_evaluation.WholeEvaluation())
    spy = _ExecutorSpy(monkeypatch)
    results = cond_estimator.evaluate(eval_input_fn(20, 4, seed=9))
    assert spy.single_threaded == [True, False]
    _assert_same(results, per_batch)


def test_a_small_input_has_its_iterator_made_in_the_evaluation_call(estimator, monkeypatch):
    # A small in-memory input read whole by one call is iterated by the call
    # itself, as `inputs.make_iterator` iterates it; any other input gets its
    # iterator from `make_iterator` first.
    from keras_estimator._src.engine import inputs

    made = []
    original = inputs.make_iterator

    def counted(dataset):
        made.append(dataset)
        return original(dataset)

    monkeypatch.setattr(inputs, "make_iterator", counted)
    per_batch = estimator.evaluate(eval_input_fn(20, 4), hooks=[ke.SessionRunHook()])
    made.clear()
    _assert_same(estimator.evaluate(eval_input_fn(20, 4)), per_batch)
    assert made == []
    x, y = make_data(num_examples=20, seed=7)

    def mapped_input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).map(lambda f, label: (f, label)).batch(4)

    _assert_same(estimator.evaluate(mapped_input_fn), per_batch)
    assert len(made) == 1
