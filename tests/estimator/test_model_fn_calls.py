"""How often Estimator calls the model_fn (docs/differences.md).

tf.estimator 2.15 called it once per train/evaluate/predict call. On one
device, so does the first call of each with an input structure: the one
trace of its step creates the variables and serves the fused loop, every
step fetching for hooks and (in evaluation) the metrics' final values.
Later calls with the same input structure reuse that trace and call it no
more, whatever their hooks fetch (2.15 called it on each). Under a
strategy on one machine the step's one trace calls it once per replica,
as 2.15 did.
"""

import pathlib
import shutil

import numpy as np
import tensorflow as tf

import keras_estimator as ke
from tests._models import input_fn, make_data, mlp_model_fn, write_forced_summary

X, Y = make_data()


def _counting(calls):
    def model_fn(features, labels, mode, params):
        calls.append(mode)
        return mlp_model_fn(features, labels, mode, params)

    return model_fn


def _predict_input_fn():
    return tf.data.Dataset.from_tensor_slices({"x": X}).batch(8)


def test_first_train_evaluate_and_predict_call_the_model_fn_once(tmp_path):
    calls = []
    est = ke.Estimator(_counting(calls), model_dir=str(tmp_path), params={"hidden": [8]})
    est.train(input_fn(X, Y), steps=3)
    # As in 2.15, once: the step's one trace, which made the variables, runs
    # the first step (whose summaries and logged loss hooks fetch) and the
    # fused steps after it.
    assert calls == ["train"]
    before = len(calls)
    # A later call reuses the trace (2.15 called the model_fn again).
    est.train(input_fn(X, Y), steps=3)
    assert calls[before:] == []
    est.evaluate(input_fn(X, Y, repeat=False))
    # Once: the step's one trace, which made the metric variables; the fused
    # loop runs it, and the metrics' final values are read from it.
    assert calls[before:] == ["eval"]
    before = len(calls)
    est.evaluate(input_fn(X, Y, repeat=False))
    assert calls[before:] == []
    list(est.predict(_predict_input_fn))
    # Once: the predicting function's trace.
    assert calls[before:] == ["infer"]


def test_a_model_fn_writing_a_file_writes_what_it_wrote_under_tf215(tmp_path):
    """Python side effects of a fresh Estimator's calls are 2.15's.

    Under tf.estimator 2.15 a model_fn appending its mode to a file left one
    line per call: train, eval, infer for a train(), an evaluate() and a
    predict() (each with its own input_fn, in the reference venv), and an
    Estimator made anew on the same model_dir, as a resumed program makes
    it, adds one line for its train().
    """
    log = tmp_path / "model_fn_calls.txt"
    model_dir = str(tmp_path / "model")

    def model_fn(features, labels, mode, params):
        with open(log, "a") as handle:
            handle.write(f"{mode}\n")
        return mlp_model_fn(features, labels, mode, params)

    est = ke.Estimator(model_fn, model_dir=model_dir, params={"hidden": [8]})
    est.train(input_fn(X, Y), steps=2)
    est.evaluate(input_fn(X, Y, repeat=False))
    next(est.predict(_predict_input_fn))
    resumed = ke.Estimator(model_fn, model_dir=model_dir, params={"hidden": [8]})
    resumed.train(input_fn(X, Y), steps=2)
    assert log.read_text().split() == ["train", "eval", "infer", "train"]
    assert int(resumed.get_variable_value("global_step")) == 4


def test_under_one_device_strategy_each_call_calls_the_model_fn_once(tmp_path):
    """Under OneDeviceStrategy, as under tf.estimator 2.15 (train_distribute and
    eval_distribute set, in the reference venv: once per train, evaluate and
    predict call), the first call of each mode calls the model_fn once: the
    replica's trace of the step creates the variables and serves the fused
    loop, the steps fetching for hooks and the metrics' final values. Later
    calls reuse the trace."""
    calls = []
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    config = ke.RunConfig(train_distribute=strategy, eval_distribute=strategy)
    est = ke.Estimator(
        _counting(calls), model_dir=str(tmp_path), params={"hidden": [8]}, config=config
    )
    est.train(input_fn(X, Y), steps=3)
    assert calls == ["train"]
    before = len(calls)
    est.train(input_fn(X, Y), steps=3)
    assert calls[before:] == []
    est.evaluate(input_fn(X, Y, repeat=False))
    assert calls[before:] == ["eval"]
    before = len(calls)
    list(est.predict(_predict_input_fn))
    assert calls[before:] == ["infer"]


def test_under_mirrored_strategy_each_replica_calls_the_model_fn_once(tmp_path):
    """tf.estimator 2.15 called the model_fn once per replica (the first
    replica's call creating the variables): twice per train() and, with
    eval_distribute, evaluate() under a two-replica MirroredStrategy, once
    per predict() (prediction was not distributed). So does the first call
    of each mode here; the training loss of each step is the replicas' mean,
    as training on one device with both replicas' batches gives it."""
    log = tmp_path / "model_fn_calls.txt"

    def model_fn(features, labels, mode, params):
        with open(log, "a") as handle:
            handle.write(f"{mode}\n")
        return mlp_model_fn(features, labels, mode, params)

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    config = ke.RunConfig(train_distribute=strategy, eval_distribute=strategy, tf_random_seed=1)
    est = ke.Estimator(model_fn, model_dir=str(tmp_path / "model"), params={"hidden": [8]}, config=config)
    est.train(input_fn(X, Y, batch_size=8), steps=3)
    assert log.read_text().split() == ["train"] * 2
    est.train(input_fn(X, Y, batch_size=8), steps=3)
    est.evaluate(input_fn(X, Y, batch_size=8, repeat=False))
    next(est.predict(_predict_input_fn))
    assert log.read_text().split() == ["train"] * 2 + ["eval"] * 2 + ["infer"]
    # Each variable trained once per step: the weights of one device
    # training on both replicas' batches (16 examples a step).
    single = ke.Estimator(
        mlp_model_fn,
        model_dir=str(tmp_path / "single"),
        params={"hidden": [8]},
        config=ke.RunConfig(tf_random_seed=1),
    )
    single.train(input_fn(X, Y, batch_size=16), steps=3)
    single.train(input_fn(X, Y, batch_size=16), steps=3)
    for name in ("dense/kernel", "dense/bias", "dense_1/kernel"):
        np.testing.assert_allclose(
            est.get_variable_value(name), single.get_variable_value(name), rtol=1e-5, atol=1e-6
        )


def test_under_mirrored_strategy_without_eval_distribute_evaluate_runs_alone(tmp_path):
    """With a MirroredStrategy as train_distribute only, tf.estimator 2.15
    evaluated without a strategy: it called the model_fn once per
    evaluate(), and evaluate(steps=N) read N batches, giving a plain
    Estimator's results on the same checkpoint (reference venv, two CPU
    replicas: 2.15's results with steps None, 2 and 3 were those of a plain
    Estimator). So does evaluate() here; before, it ran once per replica and
    read N batches per replica (steps=2: accuracy 0.5 where 2.15 gave a
    plain evaluation's 0.625). The variables stay the strategy's: an
    Estimator made anew that evaluates first, then trains, trains as one
    that never evaluated."""
    calls = []
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    config = ke.RunConfig(train_distribute=strategy, tf_random_seed=1)
    model_dir = str(tmp_path / "model")
    est = ke.Estimator(_counting(calls), model_dir, config=config, params={"hidden": [8]})
    est.train(input_fn(X, Y, batch_size=8), steps=3)
    assert calls == ["train"] * 2
    plain = ke.Estimator(mlp_model_fn, model_dir, params={"hidden": [8]})
    for steps in (2, None):
        before = len(calls)
        results = est.evaluate(input_fn(X, Y, batch_size=8, repeat=False), steps=steps)
        assert calls[before:] == ([] if steps is None else ["eval"])
        expected = plain.evaluate(input_fn(X, Y, batch_size=8, repeat=False), steps=steps)
        assert results == expected

    # Made anew on the trained model_dir, evaluating first: its variables are
    # made in that evaluation, outside the strategy, and training then
    # updates them on both replicas.
    shutil.copytree(model_dir, tmp_path / "evaluated_first")
    shutil.copytree(model_dir, tmp_path / "trained_only")
    before = len(calls)
    fresh = ke.Estimator(
        _counting(calls), str(tmp_path / "evaluated_first"), config=config, params={"hidden": [8]}
    )
    results = fresh.evaluate(input_fn(X, Y, batch_size=8, repeat=False), steps=2)
    assert calls[before:] == ["eval"]
    assert results == plain.evaluate(input_fn(X, Y, batch_size=8, repeat=False), steps=2)
    fresh.train(input_fn(X, Y, batch_size=8), steps=3)
    trained = ke.Estimator(
        mlp_model_fn, str(tmp_path / "trained_only"), config=config, params={"hidden": [8]}
    )
    trained.train(input_fn(X, Y, batch_size=8), steps=3)
    assert int(fresh.get_variable_value("global_step")) == 6
    assert sorted(fresh.get_variable_names()) == sorted(trained.get_variable_names())
    for name in trained.get_variable_names():
        np.testing.assert_array_equal(
            fresh.get_variable_value(name), trained.get_variable_value(name), err_msg=name
        )


def test_new_fetches_reuse_the_traced_step(tmp_path):
    """A hook fetching other tensors than earlier runs did calls the model_fn no more.

    The values are the step's: the loss of the batch it trained on, and the
    global step it ran at.
    """
    calls = []

    def model_fn(features, labels, mode, params):
        calls.append(mode)
        return mlp_model_fn(features, labels, mode, params)

    est = ke.Estimator(model_fn, model_dir=str(tmp_path), params={"hidden": [8]})
    est.train(input_fn(X, Y), steps=3)
    before = len(calls)
    loss_name = est._model.loss_names["train"]
    seen = []

    class Fetching(ke.SessionRunHook):
        def before_run(self, run_context):
            fetches = {"loss": loss_name, "step": tf.compat.v1.train.get_global_step()}
            if len(seen) % 2:
                fetches["kernel"] = "dense/kernel:0"
                fetches["logits"] = "dense_1/BiasAdd:0"
            return ke.SessionRunArgs(fetches)

        def after_run(self, run_context, run_values):
            seen.append(run_values.results)

    est.train(input_fn(X, Y), steps=4, hooks=[Fetching()])
    assert calls[before:] == []
    assert [r["step"] for r in seen] == [3, 4, 5, 6]
    assert [sorted(r) for r in seen] == [["loss", "step"], ["kernel", "logits", "loss", "step"]] * 2
    assert all(np.isfinite(r["loss"]) and r["loss"] > 0 for r in seen)
    # The logits are the step's: their cross-entropy on the step's batch
    # (the input restarts, 16 examples a batch) is the loss fetched with them.
    for index in (1, 3):
        logits = seen[index]["logits"].astype(np.float64)
        labels = Y[index * 16 : (index + 1) * 16]
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        cross_entropy = -log_probs[np.arange(16), labels].mean()
        np.testing.assert_allclose(cross_entropy, seen[index]["loss"], rtol=1e-5)
    # Summaries are written where the summary hook asked (each call's first
    # step, labelled with the step after it), not by the steps that fetched.
    loss_steps = sorted(
        event.step
        for path in tmp_path.glob("events.out.tfevents.*")
        for event in tf.compat.v1.train.summary_iterator(str(path))
        for value in event.summary.value
        if value.tag == "loss"
    )
    assert loss_steps == [1, 4]
    # A variable's name fetches its value after the step's update: after the
    # last step, the value the final checkpoint holds.
    np.testing.assert_array_equal(seen[-1]["kernel"], est.get_variable_value("dense/kernel"))


def test_evaluation_hooks_fetching_call_the_model_fn_once(tmp_path):
    calls = []

    def model_fn(features, labels, mode, params):
        calls.append(mode)
        return mlp_model_fn(features, labels, mode, params)

    est = ke.Estimator(model_fn, model_dir=str(tmp_path), params={"hidden": [8]})
    est.train(input_fn(X, Y), steps=3)
    before = len(calls)
    losses = []

    class LossHook(ke.SessionRunHook):
        def before_run(self, run_context):
            return ke.SessionRunArgs(est._model.loss_names["eval"])

        def after_run(self, run_context, run_values):
            losses.append(run_values.results)

    # Steps fetching for hooks run the evaluation step's own trace, as
    # tf.estimator 2.15 called the model_fn once per evaluate().
    results = est.evaluate(input_fn(X, Y, repeat=False), hooks=[LossHook()])
    assert calls[before:] == ["eval"]
    assert len(losses) == len(X) // 16
    assert np.isclose(np.mean(losses), results["loss"], rtol=1e-5)


def _summaries(directory, tag):
    """step -> value of `tag`'s summaries in `directory`'s event files."""
    found = {}
    for path in pathlib.Path(directory).glob("events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                if value.tag == tag or value.tag.endswith("/" + tag):
                    number = (
                        value.simple_value
                        if value.HasField("simple_value")
                        else float(tf.make_ndarray(value.tensor))
                    )
                    assert event.step not in found, (tag, event.step)
                    found[event.step] = number
    return found


def test_summaries_in_control_flow_call_the_model_fn_once(tmp_path):
    """A summary written inside tf.cond or a loop leaves the first train() one call.

    tf.estimator 2.15 called the model_fn once per train(). The step's one
    trace runs writes inside the model_fn's control flow only on the steps
    the summary hook asks for (before: a building trace, the fused loop's and
    each fetching step's own traces, 5 calls). The summaries and weights
    are those of a model_fn writing no summary in a cond.
    """
    calls = []

    def model_fn(features, labels, mode, params):
        calls.append(mode)
        spec = mlp_model_fn(features, labels, mode, params)
        if mode == ke.ModeKeys.TRAIN:
            step = tf.compat.v1.train.get_global_step()
            tf.cond(
                spec.loss > 0,
                lambda: tf.summary.scalar("positive_loss", spec.loss),
                lambda: tf.constant(False),
            )
            # Written when the global step, read after the step's update
            # (the summary's label), is even.
            tf.cond(
                tf.equal(step % 2, 0),
                lambda: tf.summary.scalar("even_step", tf.cast(step, tf.float32)),
                lambda: tf.constant(False),
            )

            def body(i):
                tf.summary.scalar("in_loop", spec.loss + tf.cast(i, tf.float32))
                return i + 1

            tf.while_loop(lambda i: i < 1, body, [tf.constant(0)])
        return spec

    config = ke.RunConfig(save_summary_steps=3, tf_random_seed=1)
    est = ke.Estimator(model_fn, model_dir=str(tmp_path / "cond"), params={"hidden": [8]}, config=config)
    est.train(input_fn(X, Y), steps=7)
    assert calls == ["train"]
    # Summary steps run at global steps 0, 3 and 6, labelled 1, 4 and 7.
    losses = _summaries(tmp_path / "cond", "loss")
    assert sorted(losses) == [1, 4, 7]
    assert _summaries(tmp_path / "cond", "positive_loss") == losses
    assert _summaries(tmp_path / "cond", "in_loop") == losses
    assert _summaries(tmp_path / "cond", "even_step") == {4: 4.0}

    plain = ke.Estimator(mlp_model_fn, str(tmp_path / "plain"), params={"hidden": [8]}, config=config)
    plain.train(input_fn(X, Y), steps=7)
    assert _summaries(tmp_path / "plain", "loss") == losses
    for name in plain.get_variable_names():
        np.testing.assert_array_equal(est.get_variable_value(name), plain.get_variable_value(name))

    # A later train() calls it no more and writes on its summary steps.
    before = len(calls)
    est.train(input_fn(X, Y), steps=3)
    assert calls[before:] == []
    assert sorted(_summaries(tmp_path / "cond", "positive_loss")) == [1, 4, 7, 8]
    assert _summaries(tmp_path / "cond", "even_step") == {4: 4.0, 8: 8.0}


def test_a_write_forced_inside_control_flow_keeps_a_trace_per_function(tmp_path):
    """A summary the model_fn writes inside tf.cond under a record_if of its
    own cannot be held back by the step's flag: each compiled function then
    traces the step itself (a building trace, the fused loop and a fetching
    step per set of fetches), and the summary is still written only on the
    summary hook's steps."""
    calls = []

    def model_fn(features, labels, mode, params):
        calls.append(mode)
        spec = mlp_model_fn(features, labels, mode, params)
        if mode == ke.ModeKeys.TRAIN:
            write_forced_summary(spec.loss)
        return spec

    config = ke.RunConfig(save_summary_steps=3)
    est = ke.Estimator(model_fn, model_dir=str(tmp_path), params={"hidden": [8]}, config=config)
    est.train(input_fn(X, Y), steps=7)
    # The step's shared trace, found unusable, then a building trace of its
    # own, the fused loop, and a fetching step for each set of fetches: the
    # first step's (the logged loss and summaries) and the later summary steps'.
    assert calls == ["train"] * 5
    assert sorted(_summaries(tmp_path, "positive_loss")) == [1, 4, 7]


def test_summaries_in_another_directory_call_the_model_fn_once(tmp_path):
    """A first train() whose hooks ask for summaries in a directory of their
    own calls the model_fn once, as tf.estimator 2.15 did.

    A SummarySaverHook of the program's (every 2 steps, with neither
    scaffold nor summary_op: the model_fn's summaries) and one the model_fn
    returns (every 4 steps, given the EstimatorSpec's Scaffold, whose unset
    summary_op 2.15 finalized to the model_fn's summaries) write beside the model_dir's (every 3
    steps); before, each other set of directories traced the step again
    (4 calls). Each directory gets the values a hook fetching the loss at
    every step saw, at its steps, and the weights are those of training
    without the hooks.
    """
    calls = []
    own_dir, spec_dir = tmp_path / "own", tmp_path / "spec"

    def model_fn(features, labels, mode, params):
        calls.append(mode)
        spec = mlp_model_fn(features, labels, mode, params)
        if mode == ke.ModeKeys.TRAIN:
            tf.summary.scalar("loss_twice", spec.loss * 2)
            scaffold = tf.compat.v1.train.Scaffold()
            hook = ke.SummarySaverHook(save_steps=4, output_dir=str(spec_dir), scaffold=scaffold)
            spec = spec._replace(training_hooks=[hook], scaffold=scaffold)
        return spec

    config = ke.RunConfig(save_summary_steps=3, tf_random_seed=1)
    est = ke.Estimator(model_fn, str(tmp_path / "model"), params={"hidden": [8]}, config=config)
    own = ke.SummarySaverHook(save_steps=2, output_dir=str(own_dir))
    est.train(input_fn(X, Y), steps=9, hooks=[own])
    assert calls == ["train"]

    losses = {}

    class LossEveryStep(ke.SessionRunHook):
        def before_run(self, run_context):
            return ke.SessionRunArgs(
                {"loss": plain._model.loss_names["train"], "step": tf.compat.v1.train.get_global_step()}
            )

        def after_run(self, run_context, run_values):
            losses[int(run_values.results["step"]) + 1] = float(run_values.results["loss"])

    plain = ke.Estimator(mlp_model_fn, str(tmp_path / "plain"), params={"hidden": [8]}, config=config)
    plain.train(input_fn(X, Y), steps=9, hooks=[LossEveryStep()])
    for directory, steps in ((tmp_path / "model", [1, 4, 7]), (own_dir, [1, 3, 5, 7, 9]), (spec_dir, [1, 5, 9])):
        written = _summaries(directory, "loss")
        assert sorted(written) == steps, directory
        twice = _summaries(directory, "loss_twice")
        assert sorted(twice) == steps, directory
        for step in steps:
            np.testing.assert_allclose(twice[step], 2 * written[step], rtol=1e-6)
            np.testing.assert_allclose(written[step], losses[step], rtol=1e-6)
    for name in plain.get_variable_names():
        np.testing.assert_array_equal(est.get_variable_value(name), plain.get_variable_value(name))


def test_each_export_calls_the_model_fn_once(tmp_path):
    """tf.estimator 2.15's export_saved_model called the model_fn once (a
    model_fn appending its mode to a file wrote 'infer' once, in the
    reference venv); so does each export here, the serving graph's one
    trace, whose variables get the checkpoint's values after it is built:
    the SavedModel serves the trained model's predictions."""
    log = tmp_path / "model_fn_calls.txt"

    def model_fn(features, labels, mode, params):
        with open(log, "a") as handle:
            handle.write(f"{mode}\n")
        return mlp_model_fn(features, labels, mode, params)

    est = ke.Estimator(model_fn, model_dir=str(tmp_path / "model"), params={"hidden": [8]})
    est.train(input_fn(X, Y), steps=5)
    log.write_text("")

    def receiver_fn():
        x = tf.compat.v1.placeholder(tf.float32, [None, X.shape[1]], name="x")
        return ke.export.ServingInputReceiver({"x": x}, {"x": x})

    export_dir = est.export_saved_model(str(tmp_path / "export"), receiver_fn)
    assert log.read_text().split() == ["infer"]
    est.experimental_export_all_saved_models(
        str(tmp_path / "export_all"), {ke.ModeKeys.PREDICT: receiver_fn}
    )
    assert log.read_text().split() == ["infer"] * 2
    served = tf.saved_model.load(export_dir.decode()).signatures["serving_default"]
    logits = served(x=tf.constant(X))["logits"].numpy()
    expected = np.stack([p["logits"] for p in est.predict(_predict_input_fn)])
    np.testing.assert_allclose(logits, expected, rtol=1e-6, atol=1e-6)
