"""TensorBoard, ProgbarLogger and EarlyStopping on a model_fn Estimator.

The model_fn is a linear softmax classifier with a v1 optimizer; its Keras
twin is the same layer (no bias, zeros), the same loss and SGD rate, fed the
harness's batches in the same order, trained with `Model.fit(epochs=1)`:
one `Estimator.train` call is one epoch (callbacks get `epochs=1`), so the
two runs see the same batches and end with the same weights. Where the
model_fn Estimator leaves something different behind, the test says what
and why.
"""

import os
import re

import keras
import numpy as np
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


def test_model_fn_tensorboard_writes_fits_train_run_with_the_epoch_loss_only(tmp_path):
    def make(kind):
        return [keras.callbacks.TensorBoard(str(tmp_path / kind), histogram_freq=1)]

    _both(tmp_path, make)
    for kind in ("fit", "estimator"):
        # One run directory, "train", with one event file, as fit writes.
        assert sorted(os.listdir(tmp_path / kind)) == ["train"]
        assert len(os.listdir(tmp_path / kind / "train")) == 1
    fit_events, our_events = _events(tmp_path / "fit" / "train"), _events(tmp_path / "estimator" / "train")
    assert set(fit_events.Tags()["tensors"]) == {"keras", "epoch_loss", "epoch_learning_rate", "w/kernel/histogram"}
    # A model_fn has no Keras layers, no Keras optimizer and no Functional
    # config: the weight histograms, the learning rate and the "keras" model
    # config are not written; epoch_loss is, at fit's step (the epoch, 0).
    assert our_events.Tags()["tensors"] == ["epoch_loss"]
    assert [event.step for event in our_events.Tensors("epoch_loss")] == [0]
    assert [event.step for event in fit_events.Tensors("epoch_loss")] == [0]


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
