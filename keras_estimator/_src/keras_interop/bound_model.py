"""`BoundModel`: a model_fn as a `keras.Model` whose calls go through an Estimator.

`model_fn_to_keras` returns one. Its `fit`, `evaluate` and `predict` are the
Estimator's `train`, `evaluate` and `predict` on the same model_dir (default
hooks, checkpoints and all), so a program can move to Keras calls one at a
time. The engine's `ModelFnModel` knows nothing of Estimators; this subclass,
a layer above both, is what routes the calls up.
"""

from __future__ import annotations

from typing import Any

import keras
import numpy as np
import tensorflow as tf

from keras_estimator._src.engine.fused_loop import GLOBAL_STEP_KEY, LOSS_KEY
from keras_estimator._src.engine.model_fn_model import ModelFnModel


class BoundModel(ModelFnModel):
    """A `ModelFnModel` trained, evaluated and used through `bound_estimator`.

    Calls made by the loop itself (an evaluation inside a running `fit`) are
    the plain model's.
    """

    bound_estimator: Any = None

    def bind_estimator(self, estimator: Any) -> None:
        """Routes fit/evaluate/predict through `estimator` and its model_dir."""
        self.bound_estimator = estimator

    def fit(self, x: Any = None, y: Any = None, *args: Any, **kwargs: Any) -> Any:
        """`Estimator.train(lambda: x, steps=steps_per_epoch, callbacks=callbacks)`.

        Returns Keras' `History` of the call.

        Raises:
            ValueError: labels apart from the dataset, more than one epoch, or
                arguments `Estimator.train` has no counterpart for.
        """
        if self.in_loop or self.bound_estimator is None:
            return super().fit(x, y, *args, **kwargs)
        epochs = kwargs.get("epochs", 1) - kwargs.get("initial_epoch", 0)
        unsupported = sorted(
            k for k in kwargs if k not in ("steps_per_epoch", "callbacks", "verbose", "epochs")
        )
        if y is not None or args or epochs != 1 or unsupported:
            raise ValueError(
                "A model_fn model trains the Estimator way: fit(dataset, "
                "steps_per_epoch=N, callbacks=[...]) runs N steps (or until the "
                "dataset ends) and saves checkpoints to model_dir per RunConfig. "
                f"Got y={y!r}, epochs={epochs}, extra arguments "
                f"{[*map(repr, args), *unsupported]}; put labels in the dataset "
                "and call fit once per run of steps."
            )
        steps = kwargs.get("steps_per_epoch")
        self.bound_estimator.train(lambda: x, steps=steps, callbacks=kwargs.get("callbacks"))
        history = self.history
        if isinstance(history, keras.callbacks.History):
            # What fit's History holds: the logs callbacks get (the loop's
            # global step is not one of them) and fit's params.
            history.history.pop("global_step", None)
            history.params = {
                "verbose": kwargs.get("verbose", "auto"),
                "epochs": 1,
                "steps": steps,
            }
        return history

    def evaluate(self, x: Any = None, *args: Any, **kwargs: Any) -> Any:
        """Evaluates from model_dir's latest checkpoint (`Estimator.evaluate`).

        Returns Keras' forms: a dict with `return_dict=True`, else the loss
        followed by the metrics in name order.
        """
        if self.in_loop or self.bound_estimator is None:
            return super().evaluate(x, *args, **kwargs)
        results = self.bound_estimator.evaluate(
            lambda: x, steps=kwargs.get("steps"), callbacks=kwargs.get("callbacks")
        )
        if kwargs.get("return_dict"):
            return results
        names = [LOSS_KEY, *sorted(k for k in results if k not in (LOSS_KEY, GLOBAL_STEP_KEY))]
        return [results[name] for name in names]

    def predict(self, x: Any = None, *args: Any, **kwargs: Any) -> Any:
        """Predicts from model_dir's latest checkpoint (`Estimator.predict`).

        Returns the model_fn's predictions for every example, batches joined:
        one array, or a dict of arrays.
        """
        if self.bound_estimator is None:
            return super().predict(x, *args, **kwargs)
        batches = list(
            self.bound_estimator.predict(
                lambda: x, yield_single_examples=False, callbacks=kwargs.get("callbacks")
            )
        )
        if not batches:
            return batches
        if isinstance(batches[0], dict):
            # Key by key, in the model_fn's order: tf.nest sorts the keys,
            # and fails on int keys beside str keys.
            return {key: np.concatenate([b[key] for b in batches]) for key in batches[0]}
        return tf.nest.map_structure(lambda *parts: np.concatenate(parts), *batches)
