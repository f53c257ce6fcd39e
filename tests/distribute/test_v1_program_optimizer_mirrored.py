"""A program's own v1 optimizer in a v1 canned estimator under a MirroredStrategy.

Figures from tf.estimator 2.15 (graph mode, two logical CPUs,
MirroredStrategy with ReductionToOneDevice): a LinearRegressor on
x = [1, 2, 3, 4], y = [2, 4.1, 5.9, 8.2] trained 3 steps with
`HalfStepSGD(0.05)` (tests/canned/_program_optimizers.py). Each replica's
step names the optimizer's slots from its own thread; the program's
optimizer keeps its name, as 2.15 never changed it.
"""

import numpy as np
import tensorflow as tf

import keras_estimator as ke
from tests.canned._program_optimizers import HalfStepSGD, _input_fn


def test_the_program_optimizer_keeps_its_name_and_2_15s_figures(tmp_path):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    optimizer = HalfStepSGD(0.05)
    est = ke.compat.estimator.LinearRegressor(
        [tf.feature_column.numeric_column("x")],
        optimizer=optimizer,
        model_dir=str(tmp_path),
        config=ke.RunConfig(train_distribute=strategy),
    )
    est.train(_input_fn, steps=3)
    assert optimizer.get_name() == "HalfStepSGD"
    np.testing.assert_allclose(
        est.get_variable_value("linear/linear_model/x/weights").ravel(), [25.087997], rtol=1e-6
    )
    np.testing.assert_allclose(
        est.get_variable_value("linear/linear_model/bias_weights"), [8.4072008], rtol=1e-6
    )
    # 2.15 made one count slot per variable, each updated by the 3 steps.
    slots = [name for name in est.get_variable_names() if name.endswith("HalfStepSGD")]
    assert len(slots) == 2
    for name in slots:
        np.testing.assert_allclose(est.get_variable_value(name).ravel(), [3.0])
