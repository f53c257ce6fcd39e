"""What a hook builds in begin() on the model_fn's graph, fetched in evaluate().

tf.estimator 2.15 called a hook's `begin()` on the graph model_fn had just
built, so `tf.compat.v1.summary.merge_all()` there (or any tensor made of
the graph's variables) was part of the evaluation graph, and a hook fetching
it in `before_run` got the model_fn's eval-mode summaries at every step.

Expected values: this program (`_model_fn`, `_input_fn`, `_MergeAllHook`,
`tf_random_seed=1`, `train(steps=4)` then `evaluate(steps=2)`) run on
tensorflow 2.15.1 + tensorflow-estimator 2.15.0 with `tf.estimator` in
place of `keras_estimator`.
"""

from __future__ import annotations

import glob
import logging
import os

import keras
import numpy as np
import tensorflow as tf

import keras_estimator as ke


class _MergeAllHook(tf.compat.v1.train.SessionRunHook):
    """Fetches merge_all() and a tensor it makes of the variable `w`, every step."""

    def begin(self):
        self._summary = tf.compat.v1.summary.merge_all()
        (w,) = [v for v in tf.compat.v1.global_variables() if v.name == "w:0"]
        self._made = tf.reduce_sum(w) * 3.0
        self.scalars = []
        self.made = []

    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs({"summary": self._summary, "made": self._made})

    def after_run(self, run_context, run_values):
        summary = tf.compat.v1.Summary.FromString(run_values.results["summary"])
        self.scalars.append([(v.tag, v.simple_value) for v in summary.value])
        self.made.append(float(run_values.results["made"]))


def _input_fn():
    x = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5], [-2.0, 1.0]], np.float32)
    y = np.array([[1.0], [2.0], [0.0], [-1.0]], np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(2)


def _model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", shape=[2, 1], initializer=tf.compat.v1.ones_initializer())
    prediction = tf.matmul(features["x"], w)
    tf.compat.v1.summary.scalar("w_sum", tf.reduce_sum(w))
    tf.compat.v1.summary.scalar("pred_sum", tf.reduce_sum(prediction))
    loss = tf.reduce_mean(tf.square(prediction - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.05).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step()
    )
    return ke.EstimatorSpec(
        mode, loss=loss, train_op=train_op, eval_metric_ops={"m": tf.compat.v1.metrics.mean(loss)}
    )


def _assert_scalars(got, expected):
    assert [[tag for tag, _ in step] for step in got] == [
        [tag for tag, _ in step] for step in expected
    ]
    np.testing.assert_allclose(
        [[value for _, value in step] for step in got],
        [[value for _, value in step] for step in expected],
        rtol=1e-5,
    )


def test_evaluation_hook_fetches_merge_all_and_tensors_it_made_in_begin(tmp_path):
    estimator = ke.Estimator(
        _model_fn, model_dir=str(tmp_path), config=ke.RunConfig(tf_random_seed=1)
    )
    estimator.train(_input_fn, steps=4)
    hook = _MergeAllHook()
    results = estimator.evaluate(_input_fn, steps=2, hooks=[hook])
    # 2.15: the variables after training and each batch's predictions; no
    # loss summary in evaluation.
    _assert_scalars(
        hook.scalars,
        [
            [("w_sum", 1.418473), ("pred_sum", 3.840212)],
            [("w_sum", 1.418473), ("pred_sum", -0.294028)],
        ],
    )
    np.testing.assert_allclose(hook.made, [4.255421, 4.255421], rtol=1e-5)
    # Fetching runs nothing else: the evaluation is 2.15's.
    np.testing.assert_allclose(results["loss"], 0.3998043, rtol=1e-5)
    np.testing.assert_allclose(results["m"], 0.3998043, rtol=1e-5)
    assert results["global_step"] == 4


def _predict_input_fn():
    x = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5], [-2.0, 1.0]], np.float32)
    return tf.data.Dataset.from_tensor_slices({"x": x}).batch(2)


def _predicting_model_fn(features, labels, mode):
    if mode == ke.ModeKeys.PREDICT:
        w = tf.compat.v1.get_variable(
            "w", shape=[2, 1], initializer=tf.compat.v1.ones_initializer()
        )
        prediction = tf.matmul(features["x"], w)
        tf.compat.v1.summary.scalar("w_sum", tf.reduce_sum(w))
        tf.compat.v1.summary.scalar("pred_sum", tf.reduce_sum(prediction))
        return ke.EstimatorSpec(mode, predictions={"p": prediction})
    return _model_fn(features, labels, mode)


def test_prediction_hook_fetches_merge_all_and_tensors_it_made_in_begin(tmp_path):
    estimator = ke.Estimator(
        _predicting_model_fn, model_dir=str(tmp_path), config=ke.RunConfig(tf_random_seed=1)
    )
    estimator.train(_input_fn, steps=4)
    hook = _MergeAllHook()
    predictions = [p["p"] for p in estimator.predict(_predict_input_fn, hooks=[hook])]
    # 2.15 ran merge_all() and the hook's tensor with each batch's predictions.
    _assert_scalars(
        hook.scalars,
        [
            [("w_sum", 1.418473), ("pred_sum", 3.840212)],
            [("w_sum", 1.418473), ("pred_sum", -0.294028)],
        ],
    )
    np.testing.assert_allclose(hook.made, [4.255421, 4.255421], rtol=1e-5)
    # The predictions are those predict() yields without the hook.
    plain = [p["p"] for p in estimator.predict(_predict_input_fn)]
    np.testing.assert_array_equal(predictions, plain)
    np.testing.assert_allclose(
        [sum(plain[:2]), sum(plain[2:])], [[3.840212], [-0.294028]], rtol=1e-5
    )


def _summary_events(model_dir):
    written = []
    for path in sorted(glob.glob(os.path.join(model_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            values = [(v.tag, v.simple_value) for v in event.summary.value]
            if values:
                written.append((event.step, values))
    return written


def test_hooks_under_a_mirrored_strategy_fetch_2_15s_summaries(tmp_path):
    """Two replicas, each fed its own batch of 2 (as 2.15's input_fn iterator).

    2.15 (run with cross_device_ops=ReductionToOneDevice(): its default hangs
    on two CPU devices) summarized the first replica's w_sum and pred_sum and
    the loss averaged over the replicas (1.25 at step 1: replica losses 2.0
    and 0.5); the first replica's loss (2.0) was summarized here.
    """
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    estimator = ke.Estimator(
        _predicting_model_fn,
        model_dir=str(tmp_path),
        config=ke.RunConfig(
            tf_random_seed=1,
            save_summary_steps=2,
            train_distribute=strategy,
            eval_distribute=strategy,
        ),
    )
    hook = _MergeAllHook()
    estimator.train(_input_fn, steps=4, hooks=[hook])
    steps = [
        [("w_sum", 2.0), ("pred_sum", 5.0), ("loss", 1.25)],
        [("w_sum", 1.825), ("pred_sum", 4.6375), ("loss", 0.942774)],
        [("w_sum", 1.677812), ("pred_sum", 4.346406), ("loss", 0.716901)],
        [("w_sum", 1.553098), ("pred_sum", 4.108588), ("loss", 0.549429)],
    ]
    _assert_scalars(hook.scalars, steps)
    np.testing.assert_allclose(hook.made, [6.0, 5.475, 5.033437, 4.659293], rtol=1e-5)
    events = _summary_events(str(tmp_path))
    assert [step for step, _ in events] == [1, 3]
    _assert_scalars([values for _, values in events], [steps[0], steps[2]])

    hook = _MergeAllHook()
    results = estimator.evaluate(_input_fn, steps=2, hooks=[hook])
    _assert_scalars(hook.scalars, [[("w_sum", 1.446836), ("pred_sum", 3.911569)]] * 2)
    np.testing.assert_allclose(hook.made, [4.340507, 4.340507], rtol=1e-5)
    np.testing.assert_allclose(results["loss"], 0.4247014, rtol=1e-5)

    hook = _MergeAllHook()
    predictions = [p["p"][0] for p in estimator.predict(_predict_input_fn, hooks=[hook])]
    _assert_scalars(
        hook.scalars,
        [
            [("w_sum", 1.446836), ("pred_sum", 3.911569)],
            [("w_sum", 1.446836), ("pred_sum", -0.29448)],
        ],
    )
    np.testing.assert_allclose(
        predictions, [2.0720932, 1.8394754, 0.7234178, -1.0178976], rtol=1e-5
    )


def test_loss_summary_sums_replicas_when_no_v1_optimizer_scaled_the_loss(tmp_path, caplog):
    # 2.15 summed the replicas' losses unless a v1 optimizer had divided
    # each by the replica count (then averaged them, as above): a train_op
    # of its own gave loss 2.5 at step 1 (replica losses 2.0 and 0.5), 1.605625 at step 2.
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable(
            "w", shape=[2, 1], initializer=tf.compat.v1.ones_initializer()
        )
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
        (gradient,) = tf.gradients(loss, [w])
        train_op = tf.group(
            w.assign_sub(0.05 * gradient),
            tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1),
        )
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    class Merged(tf.compat.v1.train.SessionRunHook):
        def begin(self):
            self._summary = tf.compat.v1.summary.merge_all()
            self.scalars = []

        def before_run(self, run_context):
            return tf.compat.v1.train.SessionRunArgs(self._summary)

        def after_run(self, run_context, run_values):
            summary = tf.compat.v1.Summary.FromString(run_values.results)
            self.scalars.append([(v.tag, v.simple_value) for v in summary.value])

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    estimator = ke.Estimator(
        model_fn,
        model_dir=str(tmp_path),
        config=ke.RunConfig(tf_random_seed=1, train_distribute=strategy),
    )
    hook = Merged()
    logged = []
    callback = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: logged.append(float(logs["loss"]))
    )
    with caplog.at_level(logging.INFO, logger="keras_estimator"):
        estimator.train(_input_fn, steps=2, hooks=[hook], callbacks=[callback])
    _assert_scalars(hook.scalars, [[("loss", 2.5)], [("loss", 1.605625)]])
    # The loss logged and returned is the one summarized, as in 2.15.
    np.testing.assert_allclose(logged, [2.5, 1.605625], rtol=1e-6)
    final = [m for m in caplog.messages if m.startswith("Loss for final step")]
    assert final == ["Loss for final step: 1.605625."]
