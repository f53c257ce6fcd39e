"""DNN estimators' logits for tf.estimator 2.15's hand-computed checkpoints.

tf.estimator 2.15's `dnn_testing_utils.BaseDNNLogitFnTest` wrote fixed
weights under 2.15's variable names and checked the logits by hand (for
example: age 10 -> hidden [6.1, 4.9] -> [2.38, 0] -> logit -2.08). Its tests
reach the network through private functions; here the same checkpoints are
restored by `DNNRegressor`, whose predictions are the logits.

Batch normalization: after a training step (SGD at rate 0, warm-started from
the checkpoint), the moving statistics, predictions and evaluation are the
ones tf.estimator 2.15.0 gave (run in the reference venv).
"""


import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from tests.canned._tf1_checkpoints import write_tf1_checkpoint

fc = tf.feature_column
HIDDEN = (([[0.6, 0.5]], [0.1, -0.1]), ([[1.0, 0.8], [-0.8, -1.0]], [0.2, -0.2]))
WIDE_INPUT = (([[0.6, 0.5], [-0.6, -0.5]], [0.1, -0.1]),) + HIDDEN[1:]
ONE_LOGIT = (([[-1.0], [1.0]], [0.3]),)
THREE_LOGITS = (([[-1.0, 1.0, 0.5], [-1.0, 1.0, 0.5]], [0.3, -0.3, 0.0]),)
BATCH_NORM = {
    "beta": [0.0, 0.0],
    "gamma": [1.0, 1.0],
    "moving_mean": [0.0, 0.0],
    "moving_variance": [1.0, 1.0],
}


def _checkpoint(model_dir, layers, batch_norm=None):
    """A DNN checkpoint at step 100 under 2.15's variable names."""
    *hidden, (logits_kernel, logits_bias) = layers
    values = {"dnn/logits/kernel": logits_kernel, "dnn/logits/bias": logits_bias}
    for index, (kernel, bias) in enumerate(hidden):
        values[f"dnn/hiddenlayer_{index}/kernel"] = kernel
        values[f"dnn/hiddenlayer_{index}/bias"] = bias
        for name, value in (batch_norm or {}).items():
            values[f"dnn/hiddenlayer_{index}/batchnorm_{index}/{name}"] = value
    return write_tf1_checkpoint(model_dir, values)


def _predictions(estimator, features):
    dataset = lambda: tf.data.Dataset.from_tensors(  # noqa: E731
        {k: tf.constant(v) for k, v in features.items()}
    )
    return np.stack([p["predictions"] for p in estimator.predict(dataset)])


AGE = [fc.numeric_column("age")]
AGE_2D = [fc.numeric_column("age", shape=(2,))]
AGE_HEIGHT = [fc.numeric_column("age"), fc.numeric_column("height")]


@pytest.mark.parametrize(
    "layers, columns, features, logits",
    [
        # test_one_dim_logits
        (HIDDEN + ONE_LOGIT, AGE, {"age": [[10.0]]}, [[-2.08]]),
        # test_multi_dim_logits
        (HIDDEN + THREE_LOGITS, AGE, {"age": [[10.0]]}, [[-2.08, 2.08, 1.19]]),
        # test_multi_example_multi_dim_logits
        (
            HIDDEN + THREE_LOGITS,
            AGE,
            {"age": [[10.0], [5.0]]},
            [[-2.08, 2.08, 1.19], [-1.08, 1.08, 0.69]],
        ),
        # test_multi_dim_input_one_dim_logits
        (WIDE_INPUT + ONE_LOGIT, AGE_2D, {"age": [[10.0, 8.0]]}, [[-0.48]]),
        # test_multi_dim_input_multi_dim_logits
        (WIDE_INPUT + THREE_LOGITS, AGE_2D, {"age": [[10.0, 8.0]]}, [[-0.48, 0.48, 0.39]]),
        # test_multi_feature_column_multi_dim_logits
        (
            WIDE_INPUT + THREE_LOGITS,
            AGE_HEIGHT,
            {"age": [[10.0]], "height": [[8.0]]},
            [[-0.48, 0.48, 0.39]],
        ),
    ],
    ids=["one_dim", "multi_dim", "multi_example", "wide_input", "wide_multi_dim", "two_columns"],
)
def test_restored_network_gives_2_15s_hand_computed_logits(
    layers, columns, features, logits, tmp_path
):
    estimator = ke.DNNRegressor(
        hidden_units=(2, 2),
        feature_columns=columns,
        label_dimension=len(logits[0]),
        model_dir=_checkpoint(tmp_path, layers),
    )
    np.testing.assert_allclose(_predictions(estimator, features), logits, rtol=1e-5)


def _batch_norm_regressor(model_dir, warm_start_from=None):
    return ke.DNNRegressor(
        hidden_units=[2],
        feature_columns=AGE,
        batch_norm=True,
        optimizer=tf.keras.optimizers.SGD(learning_rate=0.0),
        model_dir=model_dir,
        warm_start_from=warm_start_from,
    )


def test_batch_normalization_logits_and_moving_statistics_are_2_15s(tmp_path):
    source = _checkpoint(
        tmp_path / "source", (([[0.6, 0.5]], [1.0, -1.0]), ([[-1.0], [2.0]], [0.3])), BATCH_NORM
    )
    features = {"age": [[10.0], [20.0]]}
    # test_one_dim_logits_with_batch_norm, not training: the moving statistics
    # (0, 1) normalize [[7, 4], [13, 9]].
    restored = _batch_norm_regressor(source)
    np.testing.assert_allclose(
        _predictions(restored, features), [[1.299500375], [5.297501873]], rtol=1e-6
    )
    # One training step moves the statistics by 0.001 toward the batch's
    # (mean [10, 6.5], variance [9, 6.25]); the weights stay (rate 0).
    trained = _batch_norm_regressor(str(tmp_path / "trained"), warm_start_from=source)
    labels = tf.constant([[0.0], [0.0]])
    trained.train(lambda: ({"age": tf.constant(features["age"])}, labels), steps=1)
    prefix = "dnn/hiddenlayer_0/batchnorm_0/"
    # tf.estimator 2.15.0: [0.010000000707805157, 0.006500000134110451]; the
    # decay rounded from float32 0.999 gave [0.009999871, 0.006499916].
    np.testing.assert_allclose(
        trained.get_variable_value(prefix + "moving_mean"), [0.01, 0.0065], rtol=1e-7
    )
    np.testing.assert_allclose(
        trained.get_variable_value(prefix + "moving_variance"), [1.008, 1.00525], rtol=1e-7
    )
    np.testing.assert_allclose(
        _predictions(trained, features), [[1.3034007549285889], [5.299114227294922]], rtol=1e-7
    )
    metrics = trained.evaluate(lambda: ({"age": tf.constant(features["age"])}, labels), steps=1)
    assert metrics["loss"] == pytest.approx(14.889732, rel=1e-7)
