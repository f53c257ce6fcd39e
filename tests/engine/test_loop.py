"""The loop's stop-at-step callback and the fusion plan callbacks produce."""

import keras
from hypothesis import given
from hypothesis import strategies as st

from keras_estimator._src.base.session_run_hook import SessionRunHook
from keras_estimator._src.engine import loop as _loop
from keras_estimator._src.engine.hook_callback import HookCallback
from keras_estimator._src.hooks.basic_hooks import LoggingTensorHook
from keras_estimator._src.hooks.checkpoint_hooks import CheckpointSaverHook


class FakeModel:
    stop_training = False


def test_plan_is_minimum_of_needs(tmp_path):
    state = _loop.RunState(0)
    hooks = HookCallback(
        [
            LoggingTensorHook({"loss": "loss"}, every_n_iter=100),
            CheckpointSaverHook(str(tmp_path), save_steps=40),
        ]
    )
    callbacks = [_loop.StopAtStep(state, 250), hooks]
    # The logger fetches step 1 on its own: a one-step run first.
    assert _loop.plan_steps(callbacks, 0) == 1
    assert _loop.plan_steps([_loop.StopAtStep(state, 250)], 200) == 50


def test_plan_is_capped():
    assert _loop.plan_steps([], 0) == _loop.MAX_FUSED_STEPS


def test_plain_hooks_and_batch_callbacks_see_every_step():
    class PlainHook(SessionRunHook):
        pass

    class BatchCallback(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            pass

    class EpochCallback(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            pass

    assert _loop.plan_steps([HookCallback([PlainHook()])], 0) == 1
    assert _loop.plan_steps([BatchCallback()], 0) == 1
    assert _loop.plan_steps([EpochCallback()], 0) == _loop.MAX_FUSED_STEPS


def test_stop_at_step_sets_flag():
    state = _loop.RunState(0)
    stop = _loop.StopAtStep(state, 5)
    stop.set_model(FakeModel())
    state.value = 5
    stop.on_train_batch_end(0)
    assert stop.model.stop_training


def test_step_planner_checks_callback_kinds_once_and_plans_as_before():
    """A planner settles which callbacks plan fusion when made, then only asks them."""
    reads = []

    class Every40(keras.callbacks.Callback):
        def __getattribute__(self, name):
            if name in ("steps_until_needed", "steps_until_stop"):
                reads.append(name)
            return super().__getattribute__(name)

        def steps_until_needed(self, global_step):
            return 40 - global_step % 40

    class BatchCallback(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            pass

    state = _loop.RunState(0)
    callbacks = [_loop.StopAtStep(state, 250), Every40()]
    planner = _loop.StepPlanner(callbacks)
    made = len(reads)
    steps = (0, 30, 39, 200, 240, 249, 250, 260)
    plans = [planner(step) for step in steps]
    # Asking for a plan repeats no Protocol check (it read the method once).
    assert len(reads) == made
    assert plans == [40, 10, 1, 40, 10, 1, 0, 0]
    assert plans == [_loop.plan_steps(callbacks, step) for step in steps]
    assert _loop.StepPlanner([*callbacks, BatchCallback()])(0) == 1
    assert _loop.StepPlanner(callbacks, loop_length=100)(200) == 50
    assert _loop.StepPlanner([BatchCallback()], loop_length=100)(0) == 100


class _Asks(keras.callbacks.Callback):
    """Plans from a table: global step -> steps (None: no need)."""

    def __init__(self, table, at_least_one=False):
        super().__init__()
        self.table = table
        if at_least_one:
            self.plans_a_step = True

    def steps_until_needed(self, global_step):
        return self.table.get(global_step)

    steps_until_stop = steps_until_needed


@given(
    tables=st.lists(
        st.tuples(
            st.dictionaries(st.integers(0, 5), st.none() | st.integers(-2, 30), max_size=6),
            st.booleans(),
        ),
        max_size=4,
    ),
    loop_length=st.none() | st.integers(1, 50),
)
def test_the_stop_check_agrees_with_the_plan(tables, loop_length):
    """`plans_no_step` skips the asks that declare `plans_a_step`, and answers as the plan."""
    callbacks = []
    for table, at_least_one in tables:
        if at_least_one:  # a callback declaring it keeps the promise
            table = {step: None if n is None else max(n, 1) for step, n in table.items()}
        callbacks.append(_Asks(table, at_least_one))
    planner = _loop.StepPlanner(callbacks, loop_length)
    for step in range(6):
        assert planner.plans_no_step(step) == (planner(step) == 0)


def test_the_stop_check_asks_no_hook_callback(tmp_path):
    """A HookCallback never plans an empty run: deciding to stop does not ask it."""
    state = _loop.RunState(0)
    hooks = HookCallback([CheckpointSaverHook(str(tmp_path), save_steps=40)])
    asked = []
    original = hooks.steps_until_needed
    hooks.steps_until_needed = lambda step: asked.append(step) or original(step)
    planner = _loop.StepPlanner([_loop.StopAtStep(state, 250), hooks])
    assert [planner.plans_no_step(step) for step in (0, 249, 250)] == [False, False, True]
    assert asked == []
    assert planner(249) == 1 and asked == [249]
