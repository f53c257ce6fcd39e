"""The loop callbacks and the fusion plan they produce."""

from keras_estimator import _loop


class FakeModel:
    stop_training = False


def test_plan_is_minimum_of_needs():
    state = _loop.StepState(0)
    callbacks = [
        _loop.StopAtStep(state, 250),
        _loop.StepLogger(state, 100),
        _loop.CheckpointSaver(state, lambda step: None, 40, None),
    ]
    for callback in callbacks:
        callback.on_train_begin()
    assert _loop.plan_steps(callbacks, 0) == 1  # the logger wants step 1
    state.value = 1
    callbacks[1].on_train_batch_end(0, {"loss": 1.0})
    assert _loop.plan_steps(callbacks, 1) == 39  # the saver wants step 40
    assert _loop.plan_steps(callbacks[:1], 200) == 50


def test_plan_is_capped():
    assert _loop.plan_steps([], 0) == _loop.MAX_FUSED_STEPS


def test_checkpoint_saver_on_seconds(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(_loop.time, "monotonic", lambda: clock[0])
    saved = []
    state = _loop.StepState(10)
    saver = _loop.CheckpointSaver(state, saved.append, None, 30.0)
    saver.on_train_begin()
    state.value = 20
    clock[0] = 120.0
    saver.on_train_batch_end(0)
    state.value = 30
    clock[0] = 131.0
    saver.on_train_batch_end(1)
    state.value = 35
    saver.on_train_end()
    assert saved == [10, 30, 35]
    assert saver.steps_until_needed(35) is None


def test_stop_at_step_sets_flag():
    state = _loop.StepState(0)
    stop = _loop.StopAtStep(state, 5)
    stop.set_model(FakeModel())
    state.value = 5
    stop.on_train_batch_end(0)
    assert stop.model.stop_training
