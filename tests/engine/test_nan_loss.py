"""A NaN loss at any step of a fused run stops training at that step.

tf.estimator checked the loss after every step, with its NanTensorHook
placed after the chief's and the user's hooks. Here steps run fused, many
per call; a flag kept inside the loop ends the run after its NaN step (no
later step runs), and the dispatcher checks the loss where 2.15 did, the
checkpoint saver seeing the NaN step only after the check.
"""

import json
import logging
import re
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given
from hypothesis import strategies as st

import keras_estimator as ke
from keras_estimator.compat import layers
from tests._models import input_fn, make_data

X, Y = make_data()


def nan_at_model_fn(features, labels, mode, params):
    """A loss that is NaN in exactly one step: the one starting at `nan_at`."""
    logits = layers.dense(features["x"], 3)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    step = tf.compat.v1.train.get_global_step()
    loss = tf.where(tf.equal(step, params["nan_at"]), tf.constant(np.nan), loss)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(
        loss, global_step=step
    )
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


@given(nan_at=st.integers(0, 38), save_every=st.sampled_from([10, 25, 1000]))
def test_nan_at_any_step_of_a_fused_run_is_reported_at_that_step(
    tmp_path_factory, caplog, nan_at, save_every
):
    model_dir = str(tmp_path_factory.mktemp("nan"))
    config = ke.RunConfig(save_checkpoints_steps=save_every, log_step_count_steps=1000)
    est = ke.Estimator(
        nan_at_model_fn, model_dir=model_dir, config=config, params={"nan_at": nan_at}
    )
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="keras_estimator"):
        with pytest.raises(ke.NanLossDuringTrainingError):
            est.train(input_fn(X, Y), steps=40)
    # The step that computed the NaN loss advanced the global step to nan_at + 1.
    assert f"loss = NaN at step {nan_at + 1}." in caplog.text
    # Nothing was saved from that step on: the newest checkpoint is older.
    saved = ke.Estimator(nan_at_model_fn, model_dir=model_dir, params={"nan_at": -1})
    newest = saved.get_variable_value("global_step")
    assert newest <= nan_at
    assert newest == (nan_at // save_every) * save_every


def test_a_finite_loss_never_reports_nan(tmp_path):
    est = ke.Estimator(nan_at_model_fn, model_dir=str(tmp_path), params={"nan_at": -5})
    est.train(input_fn(X, Y), steps=30)
    assert est.get_variable_value("global_step") == 30
    assert tf.math.is_finite(est.get_variable_value("dense/kernel")).numpy().all()


def test_nan_inside_a_parameter_server_chunk_is_reported_at_its_step(tmp_path):
    # Workers run chunks of many steps; the NaN at step 40 sits inside the
    # first run (the logging hook plans runs of 50 steps). One worker: with
    # two, the other moves the global step while the NaN step runs, by as
    # many steps as the machine's load lets it, so no bound would hold.
    from tests.integration.test_parameter_server import _checkpoint_steps, _run_cluster

    result, cluster, model_dir = _run_cluster(
        tmp_path, "--model", "nan_at_40", "--steps", "200", num_workers=1
    )
    assert result["error"]["type"] == "NanLossDuringTrainingError"
    # The step the NaN step ran at, not the run's last (50).
    found = re.search(r"loss = NaN at step (\d+)\.", cluster.log("chief"))
    assert found and int(found.group(1)) == 40, cluster.log("chief")[-3000:]
    assert _checkpoint_steps(model_dir) == [0]


# ---- the NaN step, against tf.estimator 2.15 --------------------------------------
# tests/fixtures/make_tf215_nan_step_fixture.py recorded what 2.15 did.
TF215 = json.loads((Path(__file__).parents[1] / "fixtures" / "tf215_nan_step.json").read_text())


class Counting(ke.SessionRunHook):
    """Counts calls; fetches `fetch()` on every step when given."""

    def __init__(self, fetch=None):
        self.after_runs = []
        self.before_runs = 0
        self.ends = 0
        self._fetch = fetch

    def before_run(self, run_context):
        self.before_runs += 1
        return None if self._fetch is None else ke.SessionRunArgs(self._fetch())

    def after_run(self, run_context, run_values):
        results = run_values.results
        if isinstance(results, dict):
            results = {key: float(value) for key, value in results.items()}
        self.after_runs.append(results)

    def end(self, session):
        self.ends += 1

    def counts(self):
        return [len(self.after_runs), self.before_runs, self.ends]


class ObservingCounting(Counting):
    observes_only = True


class RunWatcher(ke.SessionRunHook):
    """Needs no step (steps may fuse); at each run's end, the step reached."""

    def __init__(self):
        self.seen = []

    def steps_until_needed(self, global_step):
        return None

    def after_run(self, run_context, run_values):
        live = int(tf.compat.v1.train.get_global_step().numpy())
        self.seen.append((run_context.global_step, live))


DENSE_X = np.random.default_rng(0).normal(size=(64, 4)).astype("float32")
DENSE_Y = (DENSE_X.sum(1) > 0).astype("int32")


def dense_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": DENSE_X}, DENSE_Y)).repeat().batch(16)


def dense_model_fn(made, spec_hooks=True):
    """The fixture's model: loss NaN in the step starting at params['nan_at']."""

    def model_fn(features, labels, mode, params):
        w = tf.compat.v1.get_variable("w", [4, 2], initializer=tf.compat.v1.zeros_initializer())
        logits = tf.matmul(features["x"], w)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        step = tf.compat.v1.train.get_global_step()
        loss = tf.where(tf.equal(step, params["nan_at"]), tf.constant(np.nan), loss)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=step
        )
        made["loss"] = loss
        hooks = {}
        if spec_hooks:
            made["chief"], made["spec"] = Counting(), Counting()
            hooks = {"training_chief_hooks": [made["chief"]], "training_hooks": [made["spec"]]}
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, **hooks)

    return model_fn


def fetch_loss_and_step(made):
    return lambda: {"loss": made["loss"], "step": tf.compat.v1.train.get_global_step()}


def checkpoint_values(model_dir):
    """step (as text) -> variable -> value, for every checkpoint the state file lists."""
    state = tf.train.get_checkpoint_state(model_dir)
    paths = list(state.all_model_checkpoint_paths) if state else []
    return {
        path.rsplit("-", 1)[1]: {
            name: np.asarray(tf.train.load_variable(path, name))
            for name, _ in tf.train.list_variables(path)
        }
        for path in paths
    }


def assert_checkpoints_equal(ours, expected):
    assert sorted(ours, key=int) == sorted(expected, key=int)
    for step, values in expected.items():
        assert sorted(ours[step]) == sorted(values)
        for name, value in values.items():
            np.testing.assert_allclose(ours[step][name], np.asarray(value), rtol=1e-6)


def assert_after_runs_equal(ours, expected):
    assert len(ours) == len(expected)
    for got, want in zip(ours, expected, strict=True):
        assert sorted(got) == sorted(want)
        for key in want:
            np.testing.assert_allclose(got[key], want[key], rtol=1e-6, equal_nan=True)


def test_custom_hooks_are_called_before_the_nan_check(tmp_path):
    """2.15's estimator_test.py::testCustomHooksAreCalledBeforeNanTensorHook."""

    def nan_making_model_fn(mode, features, labels):
        del features, labels
        global_step = tf.Variable(0, dtype=tf.int64, name="global_step")
        inc = tf.compat.v1.assign_add(global_step, 1)
        loss = tf.cond(inc > 1, lambda: tf.constant(np.nan, tf.float32), lambda: 1.0)
        return ke.EstimatorSpec(
            mode=mode, predictions=global_step.read_value(), loss=loss, train_op=inc
        )

    expected = TF215["upstream"]
    hook = Counting()
    est = ke.Estimator(model_fn=nan_making_model_fn, model_dir=str(tmp_path))
    with pytest.raises(ke.NanLossDuringTrainingError) as raised:
        est.train(input_fn=lambda: (dict(), None), steps=2, hooks=[hook])
    assert [type(raised.value).__name__, str(raised.value)] == expected["error"]
    # after_run at both steps, the NaN step's included; end() never.
    assert hook.counts() == expected["counts"]["user"] == [2, 2, 0]
    assert sorted(checkpoint_values(str(tmp_path))) == expected["checkpoints"] == ["0"]


@pytest.mark.parametrize("save_steps", [1, 1000])
def test_hooks_before_the_nan_check_see_the_nan_step_as_in_2_15(tmp_path, save_steps):
    """The chief's and the user's hooks get after_run at the NaN step, with
    what they fetched there; the hooks after the check (training_hooks) and
    end() do not. The checkpoints are 2.15's but the NaN step's."""
    expected = TF215[f"dense_3_{save_steps}"]
    made = {}
    est = ke.Estimator(
        dense_model_fn(made),
        model_dir=str(tmp_path),
        config=ke.RunConfig(save_checkpoints_steps=save_steps, log_step_count_steps=1000),
        params={"nan_at": 3},
    )
    user, counter = Counting(fetch_loss_and_step(made)), Counting()
    with pytest.raises(ke.NanLossDuringTrainingError) as raised:
        est.train(dense_input_fn, steps=10, hooks=[user, counter])
    assert [type(raised.value).__name__, str(raised.value)] == expected["error"]
    # 2.15: loss 0.693, 0.657, 0.624 at steps 0-2, then NaN at step 3.
    assert_after_runs_equal(user.after_runs, expected["user_after_runs"])
    assert np.isnan(user.after_runs[-1]["loss"]) and user.after_runs[-1]["step"] == 3
    ours = {
        "user": user.counts(),
        "counter": counter.counts(),
        "chief": made["chief"].counts(),
        "spec": made["spec"].counts(),
    }
    assert ours == expected["counts"]
    # 2.15's checkpoint saver ran before its NaN check and saved step 4 (the
    # NaN step) when due; here nothing from the NaN step on is saved.
    kept = {step: v for step, v in expected["checkpoints"].items() if int(step) < 4}
    assert len(kept) == len(expected["checkpoints"]) - (1 if save_steps == 1 else 0)
    assert_checkpoints_equal(checkpoint_values(str(tmp_path)), kept)


@pytest.mark.parametrize("observer", [True, False])
def test_an_observer_sees_the_nan_step_as_a_hook_run_step_by_step(tmp_path, observer):
    """Several fetching steps in one call (an observer) end at the NaN step:
    the observer gets after_run at every step up to it, with 2.15's values,
    and none after it."""
    expected = TF215["dense_3_1000"]
    made = {}
    est = ke.Estimator(
        dense_model_fn(made, spec_hooks=False),
        model_dir=str(tmp_path),
        config=ke.RunConfig(
            save_checkpoints_steps=1000, log_step_count_steps=None, save_summary_steps=None
        ),
        params={"nan_at": 3},
    )
    hook = (ObservingCounting if observer else Counting)(fetch_loss_and_step(made))
    runs = RunWatcher()
    with pytest.raises(ke.NanLossDuringTrainingError):
        est.train(dense_input_fn, steps=10, hooks=[hook, runs])
    assert_after_runs_equal(hook.after_runs, expected["user_after_runs"])
    assert hook.counts() == expected["counts"]["user"] == [4, 4, 0]
    # Its steps shared one compiled call, which ended at the NaN step (4).
    assert runs.seen == ([(4, 4)] if observer else [(1, 1), (2, 2), (3, 3), (4, 4)])
    assert int(est._store.global_step().numpy()) == 4
    assert_checkpoints_equal(checkpoint_values(str(tmp_path)), expected["checkpoints"])


# How each run path meets the NaN (nan_at, save_checkpoints_steps, settings):
# one fused call; fused steps then the logged step in one call; a loop of
# fixed length (fused steps, then the logged step in a call of its own),
# with the NaN inside the fused steps or at the last of them.
LOOP_OF_6 = {"log_step_count_steps": 6, "save_summary_steps": None, "steps_per_loop": 6}
NAN_PATHS = {
    "fused": (4, 3, {"log_step_count_steps": None, "save_summary_steps": None}),
    "fused_then_fetching": (3, 1000, {"log_step_count_steps": 6, "save_summary_steps": None}),
    "steps_per_loop": (3, 1000, LOOP_OF_6),
    "steps_per_loop_last_fused": (4, 1000, LOOP_OF_6),
}


@pytest.mark.parametrize("path", sorted(NAN_PATHS))
def test_a_nan_inside_a_fused_run_ends_the_run_at_its_step(tmp_path, caplog, path):
    """A NaN loss in the middle of a run of several steps is reported at its
    step, and no later step runs: the variables in memory are those of the
    NaN step (2.15's), and the checkpoints are 2.15's before it."""
    nan_at, save_steps, settings = NAN_PATHS[path]
    nan_step = nan_at + 1
    made = {}
    est = ke.Estimator(
        dense_model_fn(made, spec_hooks=False),
        model_dir=str(tmp_path),
        config=ke.RunConfig(save_checkpoints_steps=save_steps, **settings),
        params={"nan_at": nan_at},
    )
    runs = RunWatcher()
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="keras_estimator"):
        with pytest.raises(ke.NanLossDuringTrainingError):
            est.train(dense_input_fn, steps=20, hooks=[runs])
    assert f"loss = NaN at step {nan_step}." in caplog.text
    # The run holding the NaN step ended at it (planned further).
    assert runs.seen[-1] == (nan_step, nan_step)
    assert len(runs.seen) <= 2
    assert int(est._store.global_step().numpy()) == nan_step
    # The NaN step's gradient is zero: 2.15's variables after it are those
    # of the step before; a step after it would have moved them.
    after_nan = TF215[f"dense_{nan_at}_1"]["checkpoints"][str(nan_step)]
    np.testing.assert_allclose(est._store.get("w").numpy(), after_nan["w"], rtol=1e-6)
    expected = TF215[f"dense_{nan_at}_{save_steps}"]["checkpoints"]
    assert_checkpoints_equal(checkpoint_values(str(tmp_path)), expected)
