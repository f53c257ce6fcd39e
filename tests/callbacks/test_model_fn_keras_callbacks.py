"""TensorBoard, ProgbarLogger and EarlyStopping on a model_fn Estimator.

The model_fn is a linear softmax classifier with a v1 optimizer; its Keras
twin is the same layer (no bias, zeros), the same loss and SGD rate, fed the
harness's batches in the same order, trained with `Model.fit(epochs=1)`:
one `Estimator.train` call is one epoch (callbacks get `epochs=1`), so the
two runs see the same batches and end with the same weights. Where the
model_fn Estimator leaves something different behind, the test says what
and why. TensorBoard's comparisons use a model_fn building the twin's Keras
layers, so the checkpoint names are fit's weight paths.
"""

import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import keras_estimator as ke
from tests.callbacks import _harness as h

STEPS = 4


def _model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [4, 3], initializer=tf.compat.v1.zeros_initializer())
    logits = tf.matmul(features["x"], w)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _keras_twin():
    inputs = keras.Input((4,), name="x")
    outputs = keras.layers.Dense(3, use_bias=False, kernel_initializer="zeros", name="w")(inputs)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=keras.optimizers.SGD(0.1),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=False,
    )
    return model


class _Losses(keras.callbacks.Callback):
    """Records the batch indices seen and the loss each batch's logs hold."""

    def __init__(self):
        super().__init__()
        self.batches, self.losses, self.epochs = [], [], []

    def on_train_batch_end(self, batch, logs=None):
        self.batches.append(batch)
        self.losses.append(logs["loss"])

    def on_epoch_end(self, epoch, logs=None):
        self.epochs.append((epoch, logs["loss"]))


def _both(tmp_path, make_callbacks, steps=STEPS):
    """Trains the twin with fit and the model_fn Estimator; returns both callback lists."""
    fitted = _keras_twin()
    theirs = make_callbacks("fit")
    h.fit_run(fitted, steps, theirs)
    estimator = ke.Estimator(_model_fn, model_dir=str(tmp_path / "model"))
    ours = make_callbacks("estimator")
    estimator.train(h.dataset, steps=steps, callbacks=ours)
    # Same batches, same order, same start: the same weights.
    np.testing.assert_allclose(estimator.get_variable_value("w"), fitted.get_weights()[0], rtol=1e-6, atol=1e-7)
    return theirs, ours, estimator


def _events(log_dir):
    events = EventAccumulator(str(log_dir), size_guidance={"tensors": 0})
    events.Reload()
    return events


def _layer_model_fn(features, labels, mode):
    """`_model_fn` with its weight made by a Keras layer named as the twin's: `w/kernel`."""
    layer = keras.layers.Dense(3, use_bias=False, kernel_initializer="zeros", name="w")
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, layer(features["x"]))
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _tensors(events, tag):
    return [(event.step, tf.make_ndarray(event.tensor_proto)) for event in events.Tensors(tag)]


def test_model_fn_tensorboard_writes_fits_histograms_learning_rate_and_its_graph(tmp_path):
    def make(kind):
        return [keras.callbacks.TensorBoard(str(tmp_path / kind), histogram_freq=1, write_graph=True)]

    fitted = _keras_twin()
    h.fit_run(fitted, STEPS, make("fit"))
    estimator = ke.Estimator(_layer_model_fn, model_dir=str(tmp_path / "model"))
    estimator.train(h.dataset, steps=STEPS, callbacks=make("estimator"))
    np.testing.assert_allclose(estimator.get_variable_value("w/kernel"), fitted.get_weights()[0], rtol=1e-6, atol=1e-7)
    for kind in ("fit", "estimator"):
        # One run directory, "train", with one event file, as fit writes.
        assert sorted(os.listdir(tmp_path / kind)) == ["train"]
        assert len(os.listdir(tmp_path / kind / "train")) == 1
    fit_events, our_events = _events(tmp_path / "fit" / "train"), _events(tmp_path / "estimator" / "train")
    assert set(fit_events.Tags()["tensors"]) == {"keras", "epoch_loss", "epoch_learning_rate", "w/kernel/histogram"}
    # fit's tags but "keras" (the Keras model's config: a model_fn has none).
    assert sorted(our_events.Tags()["tensors"]) == ["epoch_learning_rate", "epoch_loss", "w/kernel/histogram"]
    # The same weights give the same histogram, at fit's step (the epoch, 0).
    [(fit_step, fit_histogram)] = _tensors(fit_events, "w/kernel/histogram")
    [(our_step, our_histogram)] = _tensors(our_events, "w/kernel/histogram")
    assert our_step == fit_step == 0
    np.testing.assert_allclose(our_histogram, fit_histogram, rtol=1e-5, atol=1e-6)
    assert [(step, float(v)) for step, v in _tensors(our_events, "epoch_learning_rate")] == [
        (step, float(v)) for step, v in _tensors(fit_events, "epoch_learning_rate")
    ] == [(0, np.float32(0.1))]
    # write_graph: fit writes the model's config ("keras"), the model_fn
    # Estimator its TRAIN graph, which holds the model_fn's ops.
    assert fit_events.Tags()["graph"] is False
    assert our_events.Tags()["graph"] is True
    nodes = {node.name: node.op for node in our_events.Graph().node}
    assert "MatMul" in nodes.values()
    assert nodes["sparse_softmax_cross_entropy_loss/value"] == "DivNoNan"
    assert "ResourceApplyGradientDescent" in nodes.values()


def _mlp_model_fn(make_optimizer):
    """The harness's model (hidden 5 relu, logits 3) as a model_fn, trained by `make_optimizer()`."""

    def model_fn(features, labels, mode):
        hidden = keras.layers.Dense(5, activation="relu", name="hidden")(features["x"])
        logits = keras.layers.Dense(3, name="logits")(hidden)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        optimizer = make_optimizer()
        if isinstance(optimizer, keras.optimizers.Optimizer):
            variables = tf.compat.v1.trainable_variables()
            train_op = optimizer.apply_gradients(zip(tf.gradients(loss, variables), variables, strict=True))
        else:
            train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def _rate_variable():
    return tf.compat.v1.get_variable("learning_rate", initializer=0.05, trainable=False)


# model_fn optimizer -> the Keras optimizer fit uses for the same rate.
_OPTIMIZERS = {
    "v1_adam": (lambda: tf.compat.v1.train.AdamOptimizer(0.01), lambda: keras.optimizers.Adam(0.01)),
    "v1_sgd_rate_variable": (
        lambda: tf.compat.v1.train.GradientDescentOptimizer(_rate_variable()),
        lambda: keras.optimizers.SGD(0.05),
    ),
    "keras_adam": (lambda: keras.optimizers.Adam(0.01), lambda: keras.optimizers.Adam(0.01)),
    "keras_sgd_schedule": (
        lambda: keras.optimizers.SGD(keras.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5)),
        lambda: keras.optimizers.SGD(keras.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5)),
    ),
}


@pytest.mark.parametrize("optimizer", sorted(_OPTIMIZERS))
def test_model_fn_tensorboard_histograms_are_the_models_variables_only(tmp_path, optimizer):
    """One histogram per model variable, by checkpoint name (= fit's tags for
    the same Keras layers), none for the optimizer's slots, its rate variable
    or global_step; epoch_learning_rate is the rate of fit's optimizer."""
    ours_optimizer, fit_optimizer = _OPTIMIZERS[optimizer]

    def make(kind):
        return [keras.callbacks.TensorBoard(str(tmp_path / kind), histogram_freq=1, write_graph=False)]

    h.fit_run(h.build_model(optimizer=fit_optimizer), STEPS, make("fit"))
    estimator = ke.Estimator(_mlp_model_fn(ours_optimizer), model_dir=str(tmp_path / "model"))
    estimator.train(h.dataset, steps=STEPS, callbacks=make("estimator"))
    fit_events, our_events = _events(tmp_path / "fit" / "train"), _events(tmp_path / "estimator" / "train")
    histograms = ["hidden/bias/histogram", "hidden/kernel/histogram", "logits/bias/histogram",
                  "logits/kernel/histogram"]
    assert sorted(t for t in fit_events.Tags()["tensors"] if t.endswith("/histogram")) == histograms
    assert sorted(our_events.Tags()["tensors"]) == sorted(["epoch_loss", "epoch_learning_rate", *histograms])
    for tag in histograms:
        assert [step for step, _ in _tensors(our_events, tag)] == [0]
        # The histogram of the checkpoint's variable, which it was written from.
        [(_, histogram)] = _tensors(our_events, tag)
        assert histogram[:, 2].sum() == estimator.get_variable_value(tag[: -len("/histogram")]).size
    [(_, fit_rate)] = _tensors(fit_events, "epoch_learning_rate")
    [(_, our_rate)] = _tensors(our_events, "epoch_learning_rate")
    assert float(our_rate) == pytest.approx(float(fit_rate), rel=1e-6)


def test_model_fn_tensorboard_says_why_a_rate_computed_in_the_step_is_not_written(tmp_path, caplog):
    def decayed():
        rate = tf.compat.v1.train.exponential_decay(0.1, tf.compat.v1.train.get_global_step(), 2, 0.5)
        return tf.compat.v1.train.GradientDescentOptimizer(rate)

    estimator = ke.Estimator(_mlp_model_fn(decayed), model_dir=str(tmp_path / "model"))
    with caplog.at_level("WARNING", logger="keras_estimator"):
        estimator.train(h.dataset, steps=2, callbacks=[keras.callbacks.TensorBoard(str(tmp_path / "tb"))])
    assert "epoch_learning_rate is not written" in caplog.text
    assert "computes its learning rate in the traced step" in caplog.text
    assert _events(tmp_path / "tb" / "train").Tags()["tensors"] == ["epoch_loss"]


def test_model_fn_tensorboard_epoch_loss_is_the_last_steps_loss(tmp_path):
    def make(kind):
        return [keras.callbacks.TensorBoard(str(tmp_path / kind)), _Losses()]

    theirs, ours, _ = _both(tmp_path, make)
    # Batch 0 starts from the same zeros: the same loss, ln(3).
    assert ours[1].losses[0] == theirs[1].losses[0] == np.float32(np.log(3.0))
    our_value = tf.make_ndarray(_events(tmp_path / "estimator" / "train").Tensors("epoch_loss")[0].tensor_proto)
    fit_value = tf.make_ndarray(_events(tmp_path / "fit" / "train").Tensors("epoch_loss")[0].tensor_proto)
    # The model_fn's logs hold each step's own loss; fit's the running mean
    # over the epoch's steps, which are the same steps (same weights, batches).
    assert float(our_value) == np.float32(ours[1].losses[-1])
    np.testing.assert_allclose(float(fit_value), theirs[1].losses[-1], rtol=1e-6)
    np.testing.assert_allclose(float(fit_value), np.mean(ours[1].losses), rtol=1e-5)


def test_model_fn_progbar_logger_prints_fits_final_line(tmp_path):
    fit_losses, our_losses = _Losses(), _Losses()
    fitted = _keras_twin()
    theirs = h.printed(lambda: fitted.fit(
        h.dataset(), steps_per_epoch=STEPS, epochs=1, shuffle=False,
        callbacks=[keras.callbacks.ProgbarLogger(), fit_losses]))
    estimator = ke.Estimator(_model_fn, model_dir=str(tmp_path / "model"))
    ours = h.printed(lambda: estimator.train(
        h.dataset, steps=STEPS, callbacks=[keras.callbacks.ProgbarLogger(), our_losses]))
    # The bar is redrawn after each "\r"; its final state is the last part.
    our_line, fit_line = ours.split("\r")[-1].rstrip(), theirs.split("\r")[-1].rstrip()
    assert f"{STEPS}/{STEPS}" in our_line and ours.endswith("\n")
    loss = re.compile(r"loss: (\d\.\d{4})$")
    # The same line but the loss: fit shows its running mean over the epoch,
    # the model_fn Estimator its last step's loss (what its logs hold).
    assert loss.sub("loss: L", our_line) == loss.sub("loss: L", fit_line)
    assert float(loss.search(fit_line).group(1)) == round(fit_losses.losses[-1], 4)
    assert float(loss.search(our_line).group(1)) == round(our_losses.losses[-1], 4)


def test_model_fn_early_stopping_one_train_call_is_fits_one_epoch(tmp_path):
    def make(_):
        return [keras.callbacks.EarlyStopping(monitor="loss", patience=0, restore_best_weights=True), _Losses()]

    theirs, ours, estimator = _both(tmp_path, make)
    assert ours[1].batches == theirs[1].batches == list(range(STEPS))
    # fit never stops after the first epoch (EarlyStopping stops at epoch > 0
    # only), and one train() call is one epoch: all steps run, nothing stops.
    for early in (theirs[0], ours[0]):
        assert (early.stopped_epoch, early.wait, early.best_epoch) == (0, 0, 0)
    assert [epoch for epoch, _ in ours[1].epochs] == [epoch for epoch, _ in theirs[1].epochs] == [0]
    # The best is the epoch's logged loss: the last step's here, fit's mean.
    assert ours[0].best == ours[1].losses[-1]
    assert theirs[0].best == theirs[1].losses[-1]
    np.testing.assert_allclose(theirs[0].best, np.mean(ours[1].losses), rtol=1e-5)
    # restore_best_weights set the view's weights to the final ones.
    assert estimator.latest_checkpoint().endswith(f"model.ckpt-{STEPS}")


def test_model_fn_early_stopping_across_train_calls_is_fit_called_again(tmp_path):
    """EarlyStopping starts afresh in each train() call, as in each fit()
    call: it never stops a run of train() calls, where fit(epochs=3) stops."""

    def early():
        # No epoch improves on the first by 10: fit(epochs=3) stops at epoch 1.
        return keras.callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=10.0)

    steps, calls = 2, 3
    in_one_fit, one_fit_losses = early(), _Losses()
    _keras_twin().fit(h.dataset(), steps_per_epoch=steps, epochs=calls, verbose=0, shuffle=False,
                      callbacks=[in_one_fit, one_fit_losses])
    assert in_one_fit.stopped_epoch == 1 and len(one_fit_losses.batches) == 2 * steps

    fitted, in_fits, fit_losses = _keras_twin(), early(), _Losses()
    estimator = ke.Estimator(_model_fn, model_dir=str(tmp_path / "model"))
    in_trains, our_losses = early(), _Losses()
    for _ in range(calls):
        h.fit_run(fitted, steps, [in_fits, fit_losses])
        estimator.train(h.dataset, steps=steps, callbacks=[in_trains, our_losses])
    assert our_losses.batches == fit_losses.batches == list(range(steps)) * calls
    assert [epoch for epoch, _ in our_losses.epochs] == [epoch for epoch, _ in fit_losses.epochs] == [0] * calls
    assert (in_trains.stopped_epoch, in_trains.wait) == (in_fits.stopped_epoch, in_fits.wait) == (0, 0)
    assert estimator.get_variable_value("global_step") == steps * calls
    np.testing.assert_allclose(estimator.get_variable_value("w"), fitted.get_weights()[0], rtol=1e-6, atol=1e-7)


def test_model_fn_terminate_on_nan_stops_after_fits_batch(tmp_path):
    """The third batch holds a NaN feature: in fit and in the model_fn
    Estimator, TerminateOnNaN stops after that batch (batch 2), gracefully,
    and the Estimator's final checkpoint is at the step it stopped."""
    x = h.X.copy()
    x[2 * h.BATCH] = np.nan

    def nan_dataset():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, h.Y)).batch(h.BATCH).repeat()

    fitted, fit_losses, our_losses = _keras_twin(), _Losses(), _Losses()
    fitted.fit(nan_dataset(), steps_per_epoch=STEPS + 2, epochs=1, verbose=0, shuffle=False,
               callbacks=[keras.callbacks.TerminateOnNaN(), fit_losses])
    estimator = ke.Estimator(_model_fn, model_dir=str(tmp_path / "model"))
    estimator.train(nan_dataset, steps=STEPS + 2, callbacks=[keras.callbacks.TerminateOnNaN(), our_losses])
    assert our_losses.batches == fit_losses.batches == [0, 1, 2]
    assert np.isnan(our_losses.losses[-1]) and np.isnan(fit_losses.losses[-1])
    assert estimator.latest_checkpoint().endswith("model.ckpt-3")
