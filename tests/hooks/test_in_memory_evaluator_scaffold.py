"""InMemoryEvaluatorHook with a model_fn whose Scaffold sets session fields.

tf.estimator 2.15 (its hooks_test.py and runs of it on TF 2.15.1): the hook
raised ValueError "InMemoryEvaluator does not support custom saver" / "...
custom init_fn" when train() began, and ran a Scaffold(init_op=...) built
from the variables' initializers (w = 0.488, loss 0.26214397 after 3 steps of
the model below). Here the hook raises 2.15's errors, and such an init_op
runs as in 2.15, with and without the hook.
"""

import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator.experimental import InMemoryEvaluatorHook


def _make_model_fn(scaffold_kind):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable(
            "w", shape=[1], initializer=tf.compat.v1.zeros_initializer()
        )
        loss = tf.reduce_sum((w * features - 1.0) ** 2)
        step = tf.compat.v1.train.get_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=step
        )
        if scaffold_kind == "global_variables_initializer":
            scaffold = tf.compat.v1.train.Scaffold(
                init_op=tf.compat.v1.global_variables_initializer()
            )
        elif scaffold_kind == "variables_initializers":
            # As 2.15's hooks_test wrote it, over several lines.
            init_op = tf.group(
                [w.initializer,
                 tf.compat.v1.train.get_global_step().initializer])
            scaffold = tf.compat.v1.train.Scaffold(init_op=init_op)
        elif scaffold_kind == "saver":
            scaffold = tf.compat.v1.train.Scaffold(saver=tf.compat.v1.train.Saver())
        else:
            scaffold = tf.compat.v1.train.Scaffold(init_fn=lambda scaffold, session: None)
        return ke.EstimatorSpec(
            mode,
            loss=loss,
            train_op=train_op,
            eval_metric_ops={"w": tf.compat.v1.metrics.mean(w)},
            scaffold=scaffold,
        )

    return model_fn


def _input_fn():
    return tf.data.Dataset.from_tensors(tf.constant([1.0])).repeat(4)


@pytest.mark.parametrize("with_hook", [True, False], ids=["hook", "no_hook"])
@pytest.mark.parametrize(
    "scaffold_kind", ["global_variables_initializer", "variables_initializers"]
)
def test_an_init_op_of_variable_initializers_runs_as_in_2_15(tmp_path, scaffold_kind, with_hook):
    est = ke.Estimator(_make_model_fn(scaffold_kind), model_dir=str(tmp_path))
    hooks = [InMemoryEvaluatorHook(est, _input_fn, every_n_iter=2)] if with_hook else []
    est.train(lambda: _input_fn().repeat(), steps=3, hooks=hooks)
    assert est.get_variable_value("w")[0] == pytest.approx(0.488, rel=1e-6)
    assert est.evaluate(_input_fn)["loss"] == pytest.approx(0.26214397, rel=1e-6)
    if with_hook:
        # The hook evaluated at step 2, and at the end of training.
        events = tf.io.gfile.glob(str(tmp_path / "eval" / "events.out.tfevents.*"))
        assert events


@pytest.mark.parametrize("field", ["saver", "init_fn"])
def test_a_scaffold_saver_or_init_fn_is_2_15s_value_error_before_the_first_step(
    tmp_path, field
):
    # An Estimator takes the Saver and runs the init_fn (docs/differences.md);
    # 2.15's hook refused them when train() began, before any step.
    est = ke.Estimator(_make_model_fn(field), model_dir=str(tmp_path))
    hook = InMemoryEvaluatorHook(est, _input_fn, every_n_iter=2)
    with pytest.raises(ValueError, match=f"^InMemoryEvaluator does not support custom {field}"):
        est.train(lambda: _input_fn().repeat(), steps=3, hooks=[hook])
    assert est.latest_checkpoint() is None or est.get_variable_value("global_step") == 0
