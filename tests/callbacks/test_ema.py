"""An optimizer with use_ema=True: train() ends with the averaged weights, as fit does."""

import keras

from tests.callbacks import _harness as h


def _ema():
    return keras.optimizers.SGD(0.3, use_ema=True, ema_momentum=0.5)


def test_train_ends_with_the_ema_weights_as_fit(tmp_path):
    fitted = h.build_model(optimizer=_ema)
    h.fit_run(fitted, 5, [])
    model = h.build_model(optimizer=_ema)
    estimator = h.estimator_run(model, 5, [], model_dir=str(tmp_path))
    h.assert_same_arrays(h.estimator_weights(estimator), fitted.get_weights())
    # A second call continues from them, as a second fit does.
    h.fit_run(fitted, 3, [])
    estimator.train(h.dataset, steps=3)
    h.assert_same_arrays(h.estimator_weights(estimator), fitted.get_weights())
