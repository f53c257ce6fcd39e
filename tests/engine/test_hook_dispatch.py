"""SessionRunHooks and Keras callbacks in one loop: order, fetches, stopping."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.base.session_run_hook import SessionRunArgs, SessionRunHook
from keras_estimator._src.engine.hook_callback import HookCallback
from tests._models import input_fn, make_data, mlp_model_fn

X, Y = make_data()


def quadratic_model_fn(features, labels, mode, params):
    """loss = (w - 1)^2 with SGD(0.1): w_k = 1 - 0.8^k, loss_k = 0.64^k."""
    del labels
    w = tf.compat.v1.get_variable("w", shape=[], initializer=tf.zeros_initializer())
    loss = tf.identity(tf.square(w - 1.0) + 0.0 * tf.reduce_sum(features), name="the_loss")
    if mode == ke.ModeKeys.PREDICT:
        return ke.EstimatorSpec(mode, predictions=features * w)
    if mode == ke.ModeKeys.EVAL:
        return ke.EstimatorSpec(
            mode, loss=loss, evaluation_hooks=list(params.get("eval_hooks", []))
        )
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return ke.EstimatorSpec(
        mode, loss=loss, train_op=train_op,
        training_hooks=list(params.get("train_hooks", [])),
    )


def ones_input_fn():
    return tf.data.Dataset.from_tensors((tf.ones([2]), tf.zeros([2]))).repeat()


class Ledger:
    def __init__(self):
        self.calls = []


class RecordingHook(SessionRunHook):
    def __init__(self, ledger, name, fetch=None, stop_at=None):
        self.ledger, self.name, self.fetch, self.stop_at = ledger, name, fetch, stop_at
        self.results = []

    def begin(self):
        self.ledger.calls.append(f"{self.name}.begin")

    def after_create_session(self, session, coord):
        self.ledger.calls.append(f"{self.name}.after_create_session")

    def before_run(self, run_context):
        self.ledger.calls.append(f"{self.name}.before_run")
        return SessionRunArgs(self.fetch) if self.fetch is not None else None

    def after_run(self, run_context, run_values):
        self.ledger.calls.append(f"{self.name}.after_run")
        self.results.append(run_values.results)
        if self.stop_at is not None and run_context.global_step >= self.stop_at:
            run_context.request_stop()

    def end(self, session):
        self.ledger.calls.append(f"{self.name}.end")


class RecordingCallback(keras.callbacks.Callback):
    def __init__(self, ledger):
        super().__init__()
        self.ledger = ledger

    def on_train_begin(self, logs=None):
        self.ledger.calls.append("callback.on_train_begin")

    def on_train_batch_begin(self, batch, logs=None):
        self.ledger.calls.append(f"callback.on_train_batch_begin({batch})")

    def on_train_batch_end(self, batch, logs=None):
        self.ledger.calls.append(f"callback.on_train_batch_end({batch})")

    def on_train_end(self, logs=None):
        self.ledger.calls.append("callback.on_train_end")


def per_step(step, hooks=("spec", "user")):
    before = [f"{h}.before_run" for h in hooks]
    after = [f"{h}.after_run" for h in hooks]
    return [
        *before,
        f"callback.on_train_batch_begin({step})",
        *after,
        f"callback.on_train_batch_end({step})",
    ]


def test_ledger_estimator_train(tmp_path):
    ledger = Ledger()
    spec_hook = RecordingHook(ledger, "spec")
    user_hook = RecordingHook(ledger, "user")
    est = ke.Estimator(
        quadratic_model_fn, model_dir=str(tmp_path), params={"train_hooks": [spec_hook]}
    )
    est.train(ones_input_fn, steps=3, hooks=[user_hook], callbacks=[RecordingCallback(ledger)])
    order = ("user", "spec")
    expected = [
        "user.begin", "spec.begin",
        "user.after_create_session", "spec.after_create_session",
        "callback.on_train_begin",
        *per_step(0, order), *per_step(1, order), *per_step(2, order),
        "user.end", "spec.end",
        "callback.on_train_end",
    ]
    # Hooks are dispatched by one callback, listed before the user's callbacks;
    # as in 2.15, the model_fn's training_hooks run after the hooks= argument.
    assert ledger.calls == expected


def test_ledger_keras_fit(tmp_path):
    ledger = Ledger()
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    hook = RecordingHook(ledger, "user")
    model.fit(
        X[:24], Y[:24], batch_size=8, epochs=1, verbose=0,
        callbacks=[HookCallback([hook]), RecordingCallback(ledger)],
    )
    expected = [
        "user.begin", "user.after_create_session", "callback.on_train_begin",
        *per_step(0, ["user"]), *per_step(1, ["user"]), *per_step(2, ["user"]),
        "user.end", "callback.on_train_end",
    ]
    assert ledger.calls == expected


def test_fetches_are_values_of_each_step(tmp_path):
    ledger = Ledger()
    by_name = RecordingHook(ledger, "name", fetch={"loss": "the_loss", "step": "global_step"})
    est = ke.Estimator(quadratic_model_fn, model_dir=str(tmp_path))
    est.train(ones_input_fn, steps=4, hooks=[by_name])
    losses = [r["loss"] for r in by_name.results]
    # Step k computes the loss before its update: 0.64^(k-1), not a running mean.
    np.testing.assert_allclose(losses, [0.64**k for k in range(4)], rtol=1e-5)
    # The global step a step ran at, as tf.estimator 2.15's hooks fetched it.
    assert [int(r["step"]) for r in by_name.results] == [0, 1, 2, 3]


def test_fetch_by_tensor_object_and_variable(tmp_path):
    captured = {}

    class CapturingHook(SessionRunHook):
        def begin(self):
            captured["step_variable"] = tf.compat.v1.train.get_global_step()

        def before_run(self, run_context):
            return SessionRunArgs([captured["loss"], captured["step_variable"]])

        def after_run(self, run_context, run_values):
            captured.setdefault("values", []).append(run_values.results)

    def model_fn(features, labels, mode, params):
        spec = quadratic_model_fn(features, labels, mode, params)
        captured["loss"] = spec.loss
        return spec

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(ones_input_fn, steps=2, hooks=[CapturingHook()])
    loss_values = [v[0] for v in captured["values"]]
    np.testing.assert_allclose(loss_values, [1.0, 0.64], rtol=1e-5)
    assert [int(v[1]) for v in captured["values"]] == [0, 1]


def test_request_stop_ends_after_current_step(tmp_path):
    ledger = Ledger()
    est = ke.Estimator(quadratic_model_fn, model_dir=str(tmp_path))
    est.train(ones_input_fn, steps=50, hooks=[RecordingHook(ledger, "stopper", stop_at=7)])
    assert est.get_variable_value("global_step") == 7
    assert est.latest_checkpoint().endswith("model.ckpt-7")


def test_session_is_not_available(tmp_path):
    class SessionHook(SessionRunHook):
        def before_run(self, run_context):
            run_context.session.run("x")

    est = ke.Estimator(quadratic_model_fn, model_dir=str(tmp_path))
    with pytest.raises(RuntimeError, match="run_context.session does not exist in TF2"):
        est.train(ones_input_fn, steps=1, hooks=[SessionHook()])


def test_unknown_fetch_name_is_explained(tmp_path):
    est = ke.Estimator(quadratic_model_fn, model_dir=str(tmp_path))
    hook = RecordingHook(Ledger(), "bad", fetch="no_such_tensor")
    with pytest.raises(ValueError, match="asked to fetch 'no_such_tensor'"):
        est.train(ones_input_fn, steps=1, hooks=[hook])


def test_compat_v1_hook_subclass_works(tmp_path):
    seen = []

    class V1Hook(tf.compat.v1.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.compat.v1.train.SessionRunArgs("the_loss")

        def after_run(self, run_context, run_values):
            seen.append(float(run_values.results))

    est = ke.Estimator(quadratic_model_fn, model_dir=str(tmp_path))
    est.train(ones_input_fn, steps=2, hooks=[V1Hook()])
    np.testing.assert_allclose(seen, [1.0, 0.64], rtol=1e-5)


def test_evaluation_and_prediction_hooks(tmp_path):
    ledger = Ledger()
    spec_eval_hook = RecordingHook(ledger, "eval_spec", fetch="the_loss")
    est = ke.Estimator(
        quadratic_model_fn, model_dir=str(tmp_path), params={"eval_hooks": [spec_eval_hook]}
    )
    est.train(ones_input_fn, steps=1)
    est.evaluate(ones_input_fn, steps=2, hooks=[RecordingHook(ledger, "eval_user")])
    assert ledger.calls.count("eval_spec.before_run") == 2
    assert ledger.calls.count("eval_user.after_run") == 2
    np.testing.assert_allclose(spec_eval_hook.results, [0.64, 0.64], rtol=1e-5)

    ledger.calls.clear()
    rows = list(est.predict(
        lambda: tf.data.Dataset.from_tensor_slices(tf.ones([4, 2])).batch(2),
        hooks=[RecordingHook(ledger, "predict")],
    ))
    assert len(rows) == 4
    assert ledger.calls == [
        "predict.begin", "predict.after_create_session",
        "predict.before_run", "predict.after_run",
        "predict.before_run", "predict.after_run",
        "predict.before_run",
        "predict.end",
    ]


def test_hooks_must_be_hooks(tmp_path):
    est = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path), params={})
    with pytest.raises(TypeError, match=r"lacks \['begin', 'after_create_session'"):
        est.train(input_fn(X, Y), steps=1, hooks=[object()])
    with pytest.raises(TypeError, match="hooks must be a list of SessionRunHooks"):
        est.train(input_fn(X, Y), steps=1, hooks=RecordingHook(Ledger(), "x"))


@pytest.mark.parametrize("empty", [{}, (), set(), []])
def test_empty_hooks_of_any_kind_are_taken(tmp_path, empty):
    # tf.estimator 2.15 read hooks as `list(hooks or [])`: train(hooks={}) ran.
    est = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path), params={})
    est.train(input_fn(X, Y), steps=1, hooks=empty)
    assert est.get_variable_value("global_step") == 1


def test_hooks_from_a_generator_run(tmp_path):
    # Any iterable of hooks, as 2.15's list(hooks) took it.
    ledger = Ledger()
    est = ke.Estimator(mlp_model_fn, model_dir=str(tmp_path), params={})
    est.train(input_fn(X, Y), steps=2, hooks=(h for h in [RecordingHook(ledger, "g")]))
    assert ledger.calls.count("g.after_run") == 2


def test_scaffold_with_a_local_init_op_doing_nothing_more_is_accepted(tmp_path):
    # 2.15's session ran it; there is nothing for it to initialize.
    def model_fn(features, labels, mode, params):
        spec = quadratic_model_fn(features, labels, mode, params)
        scaffold = tf.compat.v1.train.Scaffold(local_init_op=tf.no_op())
        return spec._replace(scaffold=scaffold)

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(ones_input_fn, steps=1)
    assert est.get_variable_value("global_step") == 1


def test_scaffold_with_a_local_init_op_assigning_is_rejected(tmp_path):
    def model_fn(features, labels, mode, params):
        spec = quadratic_model_fn(features, labels, mode, params)
        counter = tf.compat.v1.get_variable(
            "counter", [], initializer=tf.compat.v1.zeros_initializer(), trainable=False
        )
        scaffold = tf.compat.v1.train.Scaffold(
            local_init_op=tf.compat.v1.assign_add(counter, 1.0).op
        )
        return spec._replace(scaffold=scaffold)

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match=r"sets local_init_op=.*warm_start_from"):
        est.train(ones_input_fn, steps=1)


def test_empty_scaffold_is_accepted(tmp_path):
    def model_fn(features, labels, mode, params):
        spec = quadratic_model_fn(features, labels, mode, params)
        return spec._replace(scaffold=tf.compat.v1.train.Scaffold())

    est = ke.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(ones_input_fn, steps=2)
    assert est.get_variable_value("global_step") == 2


class CountingFusableHook(SessionRunHook):
    """Needs a run boundary every `every` steps; counts the runs it sees."""

    def __init__(self, every):
        self.every, self.runs, self.steps = every, 0, []

    def steps_until_needed(self, global_step):
        return self.every - global_step % self.every

    def after_run(self, run_context, run_values):
        self.runs += 1
        self.steps.append(run_context.global_step)


def test_model_fit_on_model_fn_model_shares_the_fused_loop(tmp_path):
    def make(directory):
        return ke.Estimator(
            quadratic_model_fn, model_dir=str(directory), config=ke.RunConfig(tf_random_seed=1)
        )

    via_fit = make(tmp_path / "fit")
    via_fit.train(ones_input_fn, steps=1)
    model = via_fit._model  # the model_fn as a keras.Model
    hook = CountingFusableHook(every=5)
    history = model.fit(
        ones_input_fn(), steps_per_epoch=12, callbacks=[HookCallback([hook])], verbose=0
    )
    assert isinstance(history, keras.callbacks.History)
    assert int(via_fit._store.global_step().numpy()) == 13
    # Runs end where the hook needs them: fused in between, not 12 single steps.
    assert hook.steps == [5, 10, 13]

    via_train = make(tmp_path / "train")
    via_train.train(ones_input_fn, steps=13)
    np.testing.assert_array_equal(
        via_fit._store.get("w").numpy(), via_train.get_variable_value("w")
    )


@pytest.mark.parametrize("method", ["on_train_batch_begin", "on_train_batch_end"])
def test_a_lambda_callback_sees_every_step(tmp_path, method):
    # LambdaCallback sets its functions on the instance, not the class.
    seen = []
    callback = keras.callbacks.LambdaCallback(**{method: lambda batch, logs: seen.append(batch)})
    est = ke.Estimator(quadratic_model_fn, model_dir=str(tmp_path))
    est.train(ones_input_fn, steps=30, callbacks=[callback])
    assert seen == list(range(30))


class FetchingHook(SessionRunHook):
    """Fetches the loss at every step."""

    def __init__(self):
        self.values = []

    def before_run(self, run_context):
        return SessionRunArgs("the_loss:0")

    def after_run(self, run_context, run_values):
        self.values.append(float(run_values.results))


def test_hook_callback_in_fit_of_a_model_fn_model_sees_every_step(tmp_path):
    model = ke.model_fn_to_keras(quadratic_model_fn, str(tmp_path), params={})
    hook = FetchingHook()
    history = model.fit(
        ones_input_fn(), steps_per_epoch=7, callbacks=[HookCallback([hook])], verbose=0
    )
    assert len(hook.values) == 7
    assert history.history["loss"][-1] == pytest.approx(hook.values[-1])


def test_hook_callback_in_estimator_train_joins_the_hooks(tmp_path):
    hook = FetchingHook()
    est = ke.Estimator(quadratic_model_fn, model_dir=str(tmp_path))
    est.train(ones_input_fn, steps=5, callbacks=[HookCallback([hook])])
    assert hook.values == pytest.approx([0.64**k for k in range(5)])
