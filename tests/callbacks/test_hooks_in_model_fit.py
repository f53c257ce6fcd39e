"""SessionRunHooks in Keras `Model.fit` through `HookCallback`."""

import keras
import numpy as np
import pytest

import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn
from tests.callbacks import _harness as h

X, Y = make_data()


def _keras_model(model_dir):
    config = ke.RunConfig(tf_random_seed=1, save_checkpoints_steps=5, log_step_count_steps=None)
    return ke.model_fn_to_keras(mlp_model_fn, str(model_dir), config, {"hidden": [4]})


def test_stop_if_and_in_memory_evaluator_hooks_take_the_keras_model(tmp_path):
    model = _keras_model(tmp_path)
    evaluator = ke.experimental.InMemoryEvaluatorHook(
        model, input_fn(X, Y, repeat=False), every_n_iter=5
    )
    # Stops at the first check after an evaluation: any loss is "above" -1.
    stop = ke.experimental.stop_if_higher_hook(model, "loss", -1.0, run_every_secs=None, run_every_steps=1)
    model.fit(input_fn(X, Y)(), steps_per_epoch=30, callbacks=[ke.HookCallback([evaluator, stop])])
    estimator = ke.Estimator(mlp_model_fn, str(tmp_path), params={"hidden": [4]})
    # The evaluator evaluated when training began (as 2.15's did); the stop
    # hook read that evaluation at its first check and stopped after step 1.
    assert int(estimator.get_variable_value("global_step")) == 1
    assert (tmp_path / "eval").is_dir()


def test_a_plain_keras_model_is_told_what_to_use(tmp_path):
    model = h.build_model()
    with pytest.raises(TypeError, match="model_fn_to_keras.*keras.callbacks.EarlyStopping"):
        ke.experimental.stop_if_higher_hook(model, "loss", 1.0)
    with pytest.raises(TypeError, match="model_fn_to_keras"):
        ke.experimental.InMemoryEvaluatorHook(model, lambda: None)
    saver = ke.CheckpointSaverHook(str(tmp_path), save_steps=1)
    with pytest.raises(RuntimeError, match="keras.callbacks.ModelCheckpoint") as error:
        h.fit_run(model, 2, [ke.HookCallback([saver])])
    assert "_src" not in str(error.value)


class _FetchLoss(ke.SessionRunHook):
    def __init__(self):
        self.losses = []

    def before_run(self, run_context):
        return ke.SessionRunArgs("loss")

    def after_run(self, run_context, run_values):
        self.losses.append(float(run_values.results))


def test_a_hook_fetching_loss_in_keras_fit_gets_each_steps_loss(tmp_path):
    # The Estimator's hooks fetch each step's own loss (its graph tensor);
    # in plain fit the same hook must get the same values, not fit's mean.
    estimator_hook = _FetchLoss()
    h.estimator_run(h.build_model(), 6, [ke.HookCallback([estimator_hook])], model_dir=str(tmp_path))
    fit_hook, means = _FetchLoss(), []
    recorder = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: means.append(logs["loss"])
    )
    h.fit_run(h.build_model(), 6, [ke.HookCallback([fit_hook]), recorder])
    assert len(fit_hook.losses) == 6
    np.testing.assert_allclose(fit_hook.losses, estimator_hook.losses, rtol=1e-5)
    assert fit_hook.losses[1:] != pytest.approx(means[1:], rel=1e-5)


def _write_eval_losses(eval_dir, losses):
    import tensorflow as tf

    writer = tf.summary.create_file_writer(str(eval_dir))
    with writer.as_default():
        for step, loss in losses.items():
            tf.summary.scalar("loss", loss, step=step)
    writer.close()


_STOP_HOOKS = {
    "lower": lambda est: ke.experimental.stop_if_lower_hook(
        est, "loss", 1.0, run_every_secs=None, run_every_steps=4
    ),
    "no_decrease": lambda est: ke.experimental.stop_if_no_decrease_hook(
        est, "loss", 2, run_every_secs=None, run_every_steps=4
    ),
    "checkpoint_step": lambda est: ke.experimental.make_stop_at_checkpoint_step_hook(
        est, 10, wait_after_file_check_secs=0
    ),
}


@pytest.mark.parametrize("kind", sorted(_STOP_HOOKS))
def test_stop_hooks_stop_fit_at_the_step_estimator_train_stops(tmp_path, kind):
    # Evaluations (loss 0.5 at step 1, 2.0 at step 8) are already in eval/:
    # the threshold and no-decrease hooks stop at their first check, the
    # checkpoint-step hook once checkpoint 10 exists. Model.fit through
    # HookCallback must stop where Estimator.train does.
    stopped = {}
    for entry in ("estimator", "fit"):
        model_dir = tmp_path / entry
        _write_eval_losses(model_dir / "eval", {1: 0.5, 8: 2.0})
        config = ke.RunConfig(tf_random_seed=1, save_checkpoints_steps=5, log_step_count_steps=None)
        if entry == "estimator":
            est = ke.Estimator(mlp_model_fn, str(model_dir), config, params={"hidden": [4]})
            est.train(input_fn(X, Y), steps=30, hooks=[_STOP_HOOKS[kind](est)])
        else:
            model = ke.model_fn_to_keras(mlp_model_fn, str(model_dir), config, {"hidden": [4]})
            model.fit(input_fn(X, Y)(), steps_per_epoch=30,
                      callbacks=[ke.HookCallback([_STOP_HOOKS[kind](model)])])
            est = ke.Estimator(mlp_model_fn, str(model_dir), config, params={"hidden": [4]})
        stopped[entry] = int(est.get_variable_value("global_step"))
    assert stopped["fit"] == stopped["estimator"]
    assert stopped["estimator"] < 30
    if kind == "checkpoint_step":
        assert stopped["estimator"] == 10
