"""Observer hooks fetching on every step: several steps per compiled call, same results.

A run whose fetching hooks all only observe (`ke.ObserverHook`, the stock
LoggingTensorHook and SummarySaverHook on step timers) covers several steps
in one compiled call; the hooks then get `before_run`/`after_run` step by
step. The same hooks declared as non-observers make every step a run of its
own. Both must give the hooks the same calls, global steps and values, and
write the same checkpoints with the same final weights, bit for bit.
"""

import glob
import os
import tempfile

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from tests._models import make_data, mlp_model_fn


def _frozen(value):
    """A value as comparable bytes: dtype, shape and contents of every leaf."""
    if value is None:
        return None
    if isinstance(value, dict):
        return tuple((key, _frozen(value[key])) for key in sorted(value))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    array = np.asarray(value)
    return (type(value).__name__, array.dtype.str, array.shape, array.tobytes())


class Recorder(ke.ObserverHook):
    """Fetches `fetches` on every step; records each call with its step and values."""

    def __init__(self, name, fetches, log):
        self.name = name
        self.fetches = fetches
        self.log = log

    def before_run(self, run_context):
        self.log.append(("before", self.name, run_context.global_step))
        return ke.SessionRunArgs(self.fetches)

    def after_run(self, run_context, run_values):
        self.log.append(("after", self.name, run_context.global_step, _frozen(run_values.results)))


class UnfusedLogging(ke.LoggingTensorHook):
    observes_only = False


class FetchEvery(ke.SessionRunHook):
    """Not an observer: fetches the loss every `every` steps and plans for it."""

    def __init__(self, every, log):
        self.every = every
        self.log = log
        self.due = False

    def steps_until_needed(self, global_step):
        return self.every - global_step % self.every if global_step % self.every else 1

    def before_run(self, run_context):
        self.due = run_context.global_step % self.every == 0
        return ke.SessionRunArgs("the_loss:0") if self.due else None

    def after_run(self, run_context, run_values):
        if self.due:
            self.log.append(("plain", run_context.global_step, _frozen(run_values.results)))


class RunCounter(ke.SessionRunHook):
    """Counts runs (plans nothing, so it sees only the boundaries others need)."""

    def __init__(self):
        self.runs = 0

    def steps_until_needed(self, global_step):
        return None

    def after_run(self, run_context, run_values):
        self.runs += 1


def _model_fn(features, labels, mode, params):
    spec = mlp_model_fn(features, labels, mode, params)
    return spec._replace(loss=tf.identity(spec.loss, name="the_loss"))


def _checkpoints(model_dir):
    """step -> {variable name: value} of every checkpoint in model_dir."""
    found = {}
    for index in glob.glob(os.path.join(model_dir, "model.ckpt-*.index")):
        prefix = index[: -len(".index")]
        reader = tf.train.load_checkpoint(prefix)
        found[int(prefix.rsplit("-", 1)[1])] = {
            name: _frozen(reader.get_tensor(name))
            for name in reader.get_variable_to_shape_map()
        }
    return found


def train(case, fused):
    x, y = make_data(num_examples=24)
    log = []
    logged = []
    logging_class = ke.LoggingTensorHook if fused else UnfusedLogging
    hooks = [
        logging_class(
            {"loss": "the_loss", "step": "global_step"},
            every_n_iter=every,
            formatter=lambda values, i=i: logged.append((i, _frozen(values))) or "",
        )
        for i, every in enumerate(case["log_every"])
    ]
    recorders = [
        Recorder("loss", "the_loss:0", log),
        Recorder("kernel", {"k": "dense/kernel", "b": ["dense/bias:0"]}, log),
    ]
    for recorder in recorders:
        recorder.observes_only = fused
    hooks[case["recorder_at"] : case["recorder_at"]] = recorders
    if case["plain_every"]:
        hooks.append(FetchEvery(case["plain_every"], log))
    counter = RunCounter()
    hooks.append(counter)
    rows = 4 * 3

    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": x[:rows]}, y[:rows])).repeat()
        data = data.batch(4)
        return data.take(case["batches"]) if case["batches"] else data

    with tempfile.TemporaryDirectory() as model_dir:
        est = ke.Estimator(
            _model_fn,
            model_dir=model_dir,
            params={"hidden": [3], "optimizer": case["optimizer"]},
            config=ke.RunConfig(
                tf_random_seed=7,
                save_checkpoints_steps=case["save_every"],
                keep_checkpoint_max=100,
                log_step_count_steps=case["count_every"],
                save_summary_steps=case["summary_every"],
            ),
        )
        est.train(input_fn, steps=case["steps"], hooks=hooks)
        weights = {n: _frozen(est.get_variable_value(n)) for n in est.get_variable_names()}
        checkpoints = _checkpoints(model_dir)
    return {"log": log, "logged": logged, "checkpoints": checkpoints, "weights": weights}, counter.runs


CASES = st.fixed_dictionaries(
    {
        "steps": st.integers(1, 24),
        "batches": st.one_of(st.none(), st.integers(1, 24)),
        "log_every": st.lists(st.integers(1, 5), min_size=0, max_size=2),
        "recorder_at": st.integers(0, 2),
        "plain_every": st.one_of(st.none(), st.integers(2, 7)),
        "save_every": st.sampled_from([1, 2, 3, 5, 8, 100]),
        "count_every": st.sampled_from([None, 3, 100]),
        "summary_every": st.sampled_from([None, 4, 100]),
        "optimizer": st.sampled_from(["adam", "sgd"]),
    }
)


@given(case=CASES)
def test_observers_fused_see_what_they_see_step_by_step(case):
    fused, fused_runs = train(case, fused=True)
    unfused, unfused_runs = train(case, fused=False)
    final = min(case["steps"], case["batches"] or case["steps"])
    # Really step by step without the declaration: a run per step.
    assert unfused_runs == final
    assert fused["weights"]["global_step"] == unfused["weights"]["global_step"]
    assert int(np.frombuffer(fused["weights"]["global_step"][3], np.int64)[0]) == final
    # Every hook call, its global step and the values it got, in order.
    afters = [entry for entry in unfused["log"] if entry[0] == "after"]
    assert [entry[2] for entry in afters] == [s for s in range(1, final + 1) for _ in (0, 1)]
    assert fused["log"] == unfused["log"]
    assert fused["logged"] == unfused["logged"]
    # Checkpoints at the same steps with the same values, and the final weights.
    assert sorted(fused["checkpoints"]) == sorted(unfused["checkpoints"])
    assert fused["checkpoints"] == unfused["checkpoints"]
    assert fused["weights"] == unfused["weights"]


def test_observers_fetching_every_step_share_compiled_calls():
    case = {
        "steps": 20,
        "batches": None,
        "log_every": [1],
        "recorder_at": 0,
        "plain_every": None,
        "save_every": 10,
        "count_every": None,
        "summary_every": None,
        "optimizer": "adam",
    }
    fused, fused_runs = train(case, fused=True)
    unfused, unfused_runs = train(case, fused=False)
    assert unfused_runs == 20
    # The first step alone (the default hooks' first trigger), then up to
    # the checkpoint at 10, then up to 20.
    assert fused_runs <= 4
    assert fused == unfused


class StopsInside(ke.ObserverHook):
    """Breaks the observer promise: requests a stop from after_run."""

    def before_run(self, run_context):
        return ke.SessionRunArgs("the_loss:0")

    def after_run(self, run_context, run_values):
        if run_context.global_step == 3:
            run_context.request_stop()


class ChangesFetches(ke.ObserverHook):
    """Breaks the observer promise: fetches something else from step 3."""

    def before_run(self, run_context):
        if run_context.global_step >= 3:
            return ke.SessionRunArgs("dense/bias:0")
        return ke.SessionRunArgs("the_loss:0")


@pytest.mark.parametrize("hook", [StopsInside(), ChangesFetches()])
def test_a_hook_breaking_the_observer_promise_is_reported(hook):
    x, y = make_data(num_examples=8)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(4)

    with tempfile.TemporaryDirectory() as model_dir:
        est = ke.Estimator(
            _model_fn,
            model_dir=model_dir,
            params={"hidden": [3]},
            config=ke.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None,
                                log_step_count_steps=None, save_summary_steps=None),
        )
        with pytest.raises(RuntimeError, match="observes_only = True"):
            est.train(input_fn, steps=10, hooks=[hook])


def _train_into_nan(fused):
    x, y = make_data(num_examples=8)
    seen = []

    class Sees(ke.ObserverHook):
        observes_only = fused

        def before_run(self, run_context):
            seen.append(("before", run_context.global_step))
            return ke.SessionRunArgs("the_loss:0")

        def after_run(self, run_context, run_values):
            seen.append(("after", run_context.global_step, _frozen(run_values.results)))

    def model_fn(features, labels, mode, params):
        spec = mlp_model_fn(features, labels, mode, params)
        step = tf.compat.v1.train.get_global_step()
        loss = tf.where(tf.equal(step, 4), np.float32("nan"), spec.loss)
        return spec._replace(loss=tf.identity(loss, name="the_loss"))

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(4)

    with tempfile.TemporaryDirectory() as model_dir:
        est = ke.Estimator(
            model_fn,
            model_dir=model_dir,
            params={"hidden": [3], "optimizer": "sgd"},
            config=ke.RunConfig(
                tf_random_seed=7,
                log_step_count_steps=None,
                save_summary_steps=None,
                save_checkpoints_steps=8,
            ),
        )
        with pytest.raises(ke.NanLossDuringTrainingError):
            est.train(input_fn, steps=10, hooks=[Sees()])
        checkpoints = _checkpoints(model_dir)
    return seen, checkpoints


def test_nan_loss_inside_a_fused_run_fails_at_its_step():
    fused = _train_into_nan(fused=True)
    unfused = _train_into_nan(fused=False)
    assert fused == unfused
    # The NaN step (reported at global step 4) ended, and the observer saw it end
    # with its NaN loss, as a hook before tf.estimator 2.15's NaN check did;
    # no step after it ran.
    last = fused[0][-1]
    assert last[:2] == ("after", 4)
    assert np.isnan(np.frombuffer(last[2][3], np.dtype(last[2][1]))).all()
    assert [entry[0] for entry in fused[0]] == ["before", "after"] * 4
