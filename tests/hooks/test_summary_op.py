"""`SummarySaverHook(summary_op=... / scaffold=... / summary_writer=...)` as in tf.estimator 2.15.

The model_fn of `tests/fixtures/make_tf215_summary_op_fixture.py` hands TF1
summary ops to five SummarySaverHooks; 2.15's event files (steps, tags and
values) are in `tests/fixtures/tf215_summary_op/summaries.json`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tensorboard.backend.event_processing import event_accumulator

import keras_estimator as ke
from tests.fixtures import make_tf215_summary_op_fixture as fixture

_EXPECTED = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "tf215_summary_op" / "summaries.json").read_text()
)


class _Api:
    EstimatorSpec = ke.EstimatorSpec
    SummarySaverHook = ke.SummarySaverHook
    Scaffold = tf.compat.v1.train.Scaffold


def _read(path: Path) -> dict:
    """Scalars (TF1 simple values and TF2 scalar tensors alike) and histograms by tag."""
    accumulator = event_accumulator.EventAccumulator(
        str(path),
        size_guidance={
            event_accumulator.SCALARS: 0,
            event_accumulator.HISTOGRAMS: 0,
            event_accumulator.TENSORS: 0,
        },
    )
    accumulator.Reload()
    tags = accumulator.Tags()
    scalars = {t: [[e.step, e.value] for e in accumulator.Scalars(t)] for t in tags["scalars"]}
    for tag in tags["tensors"]:
        scalars[tag] = [
            [e.step, float(tf.make_ndarray(e.tensor_proto))] for e in accumulator.Tensors(tag)
        ]
    histograms = {
        t: [[e.step, e.histogram_value.num, e.histogram_value.sum] for e in accumulator.Histograms(t)]
        for t in tags["histograms"]
    }
    return {"scalars": scalars, "histograms": histograms}


def _assert_same(mine: dict, theirs: dict, where: str) -> None:
    for kind in ("scalars", "histograms"):
        assert sorted(mine[kind]) == sorted(theirs[kind]), (where, kind)
        for tag, rows in theirs[kind].items():
            got = np.array(mine[kind][tag], np.float64)
            want = np.array(rows, np.float64)
            assert got.shape == want.shape, (where, tag, mine[kind][tag], rows)
            np.testing.assert_array_equal(got[:, 0], want[:, 0], err_msg=f"{where} {tag} steps")
            np.testing.assert_allclose(got[:, 1:], want[:, 1:], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{where} {tag}")


@pytest.fixture(scope="module", params=["estimator", "fit"])
def trained(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The program trained by `Estimator.train`, or by `Model.fit` of `model_fn_to_keras`."""
    root = tmp_path_factory.mktemp(f"summary_op_{request.param}")
    model_fn = fixture.make_model_fn(_Api, str(root))
    config = ke.RunConfig(save_summary_steps=fixture.SAVE_SUMMARY_STEPS)
    if request.param == "estimator":
        estimator = ke.Estimator(model_fn, model_dir=str(root / "model"), config=config)
        estimator.train(fixture.input_fn, steps=fixture.STEPS)
    else:
        model = ke.model_fn_to_keras(model_fn, str(root / "model"), config)
        model.fit(fixture.input_fn(), steps_per_epoch=fixture.STEPS)
    return root


@pytest.mark.parametrize("name", ["one_op", "op_list", "scaffold_op", "file_writer"])
def test_summary_ops_are_written_at_2_15s_steps(trained: Path, name: str) -> None:
    # one_op (save_steps=3): my_loss at 1, 4, 7, 10 with 2.15's values;
    # op_list: both ops of the list; scaffold_op: Scaffold(summary_op=merge_all());
    # file_writer: a tf.compat.v1.summary.FileWriter made in model_fn.
    _assert_same(_read(trained / name), _EXPECTED[name], name)


def test_spec_scaffold_saves_what_2_15s_finalized_scaffold_merged(trained: Path) -> None:
    # The EstimatorSpec's own Scaffold: 2.15's session set its summary_op to
    # merge_all() (the model_fn's summaries and the loss), at steps 1, 3, ..., 11.
    # At steps 1 and 11 model_dir's hook is due too: both directories get them.
    _assert_same(_read(trained / "spec_scaffold"), _EXPECTED["spec_scaffold"], "spec_scaffold")


def test_model_dir_holds_2_15s_summaries(trained: Path) -> None:
    _assert_same(_read(trained / "model"), _EXPECTED["model"], "model")


def test_tf1_scalars_keep_2_15s_simple_value_format(trained: Path) -> None:
    accumulator = event_accumulator.EventAccumulator(str(trained / "one_op"))
    accumulator.Reload()
    assert accumulator.Tags()["scalars"] == ["my_loss"]


def test_both_scaffold_and_summary_op_raise_2_15s_value_error() -> None:
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op must be provided"):
        ke.SummarySaverHook(save_steps=1, output_dir="x", scaffold=tf.compat.v1.train.Scaffold(),
                            summary_op=tf.constant(b""))


def test_a_summary_writer_of_another_kind_is_refused() -> None:
    with pytest.raises(TypeError, match=r"summary_writer=.*expected a tf.compat.v1.summary.FileWriter"):
        ke.SummarySaverHook(save_steps=1, summary_writer=object())


def test_tensorflow_summary_switch_is_put_back_after_training(trained: Path) -> None:
    # The TF1-summary switch replaces TensorFlow's function only while a trace
    # is inside it: after train() (the module fixture), TensorFlow's own is in place.
    import importlib

    from keras_estimator._src.tf_internals import v1_summaries

    module = importlib.import_module("tensorflow.python.summary.summary")
    assert not v1_summaries.is_patched()
    assert module._should_invoke_v2_op.__module__ == module.__name__
    graph = tf.Graph()
    with graph.as_default(), v1_summaries.as_protos():
        assert v1_summaries.is_patched()
        assert module._should_invoke_v2_op.__module__ != module.__name__
    assert module._should_invoke_v2_op.__module__ == module.__name__


def test_spec_scaffold_summary_op_is_what_model_dir_holds(tmp_path: Path) -> None:
    # tf.estimator 2.15 accepted EstimatorSpec(scaffold=Scaffold(summary_op=...))
    # and its default summary hook wrote that op alone to model_dir: run in
    # 2.15, a model_fn with summaries 'a' and 'b' and summary_op=merge([a])
    # left only 'a' (no 'b', no 'loss'). This refused the Scaffold.
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", initializer=3.0)
        loss = tf.square(w - 1.0) + 0.0 * tf.reduce_sum(features["x"])
        a = tf.compat.v1.summary.scalar("a", w)
        tf.compat.v1.summary.scalar("b", 2.0 * w)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        scaffold = tf.compat.v1.train.Scaffold(summary_op=tf.compat.v1.summary.merge([a]))
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, scaffold=scaffold)

    def input_fn():
        return tf.data.Dataset.from_tensors(({"x": [1.0]}, [0.0])).repeat()

    estimator = ke.Estimator(
        model_fn, model_dir=str(tmp_path), config=ke.RunConfig(save_summary_steps=3)
    )
    estimator.train(input_fn, steps=7)
    written = _read(tmp_path)
    tags = {tag for kind in written.values() for tag in kind}
    assert tags == {"a"}
    steps_and_values = np.array(written["scalars"]["a"], np.float64)
    np.testing.assert_array_equal(steps_and_values[:, 0], [1, 4, 7])
    # w before each of those steps' updates: 1 + 2 * 0.8 ** (step - 1).
    np.testing.assert_allclose(steps_and_values[:, 1], 1 + 2 * 0.8 ** np.array([0, 3, 6]), rtol=1e-5)


def test_tf2_summaries_reach_every_directory_due(tmp_path: Path) -> None:
    # A tf.summary call in model_fn, a Scaffold hook saving every step to
    # "every_step" and model_dir's every 2 steps: each directory gets the
    # value at its own steps, those both are due at (1, 3) included.
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", initializer=3.0)
        loss = tf.square(w - 1.0) + 0.0 * tf.reduce_sum(features["x"])
        tf.summary.scalar("w_tf2", w)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        # The spec's own Scaffold: 2.15 finalized it, so the hook saves the
        # model_fn's summaries (test_a_scaffold_no_estimator_spec_returned...).
        scaffold = tf.compat.v1.train.Scaffold()
        hook = ke.SummarySaverHook(save_steps=1, output_dir=str(tmp_path / "every_step"),
                                   scaffold=scaffold)
        return ke.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[hook],
                                scaffold=scaffold)

    estimator = ke.Estimator(model_fn, model_dir=str(tmp_path / "model"),
                             config=ke.RunConfig(save_summary_steps=2))
    estimator.train(fixture.input_fn, steps=4)
    every_step = _read(tmp_path / "every_step")["scalars"]["w_tf2"]
    in_model_dir = _read(tmp_path / "model")["scalars"]["w_tf2"]
    # w before each step: 3.0, then 3 - 0.1 * 4 = 2.6, then 2.6 - 0.1 * 3.2 = 2.28, ...
    assert [step for step, _ in every_step] == [1, 2, 3, 4]
    assert [step for step, _ in in_model_dir] == [1, 3]
    values = dict(every_step)
    np.testing.assert_allclose([value for _, value in in_model_dir], [values[1], values[3]], rtol=1e-6)
    np.testing.assert_allclose([value for _, value in every_step][:2], [3.0, 2.6], rtol=1e-6)


def _tags_by_step(path: Path) -> list[tuple[int, str]]:
    found = []
    for file in sorted(path.glob("events.*")):
        for event in tf.compat.v1.train.summary_iterator(str(file)):
            found.extend((event.step, value.tag) for value in event.summary.value)
    return found


@pytest.mark.parametrize("whose", ["its_own", "the_spec_s"])
def test_a_scaffold_no_estimator_spec_returned_saves_no_summaries_as_in_2_15(
    tmp_path: Path, whose: str
) -> None:
    # tf.estimator 2.15 finalized only the EstimatorSpec's Scaffold, whose
    # unset summary_op became merge_all(); a hook's own Scaffold() kept it
    # None, and the hook saved nothing (the public idiom
    # `SummarySaverHook(save_steps=..., output_dir=..., scaffold=tf.train.Scaffold())`).
    out = tmp_path / "hook"
    x = (np.arange(8, dtype=np.float32) / 8).reshape(8, 1)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, 2 * x + 1)).repeat().batch(4)

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [1, 1], initializer=tf.compat.v1.zeros_initializer())
        loss = tf.compat.v1.losses.mean_squared_error(labels, tf.matmul(features["x"], w))
        tf.compat.v1.summary.scalar("myloss", loss)
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step()
        )
        scaffold = tf.compat.v1.train.Scaffold()
        hooks = []
        if whose == "the_spec_s":
            hooks = [ke.SummarySaverHook(save_steps=2, output_dir=str(out), scaffold=scaffold)]
        return ke.EstimatorSpec(
            mode, loss=loss, train_op=train_op, scaffold=scaffold, training_hooks=hooks
        )

    est = ke.Estimator(
        model_fn, str(tmp_path / "model"), config=ke.RunConfig(save_summary_steps=None)
    )
    hooks = []
    if whose == "its_own":
        scaffold = tf.compat.v1.train.Scaffold()
        hooks = [ke.SummarySaverHook(save_steps=2, output_dir=str(out), scaffold=scaffold)]
    est.train(input_fn, steps=5, hooks=hooks)
    expected = {
        "its_own": [],
        "the_spec_s": [(s, t) for s in (1, 3, 5) for t in ("myloss", "loss")],
    }[whose]
    assert sorted(_tags_by_step(out)) == sorted(expected)
