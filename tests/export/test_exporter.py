"""Exporters: LatestExporter, FinalExporter, BestExporter and export clean-up.

Most tests drive the exporters directly with `FakeEstimator`, which records
each `export_saved_model` call and writes a timestamped directory; the last
ones export real SavedModels from an Estimator through train_and_evaluate.
"""

import inspect
import os

import numpy as np
import pytest
import tensorflow as tf

import keras_estimator as ke
from keras_estimator._src.checkpoint.eval_events import read_scalars
from keras_estimator._src.export import best_exporter as _best_exporter
from keras_estimator._src.export.exporters import garbage_collect_exports
from tests._models import input_fn, make_data, mlp_model_fn

X, Y = make_data()


class FakeEstimator:
    """What exporters use of an Estimator: model_dir and export_saved_model."""

    def __init__(self, model_dir):
        self.model_dir = str(model_dir)
        self.calls = []
        self._next_stamp = 1_600_000_000

    def export_saved_model(
        self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
        checkpoint_path=None,
    ):
        self.calls.append(
            {
                "base": export_dir_base,
                "fn": serving_input_receiver_fn,
                "assets_extra": assets_extra,
                "as_text": as_text,
                "checkpoint_path": checkpoint_path,
            }
        )
        self._next_stamp += 1
        export_dir = os.path.join(export_dir_base, str(self._next_stamp))
        os.makedirs(export_dir)
        return export_dir.encode()


def serving_fn():
    return None


def export(exporter, est, step, final=False, **metrics):
    metrics.setdefault("loss", 1.0)
    return exporter.export(
        est,
        os.path.join(est.model_dir, "export", exporter.name),
        f"{est.model_dir}/model.ckpt-{step}",
        {**metrics, "global_step": step},
        final,
    )


def exports_on_disk(est, name):
    base = os.path.join(est.model_dir, "export", name)
    return sorted(os.listdir(base)) if os.path.isdir(base) else []


def write_eval_events(eval_dir, step, **metrics):
    """Eval summaries as Estimator.evaluate writes them (one TF2 event per metric)."""
    writer = tf.summary.create_file_writer(str(eval_dir))
    with writer.as_default():
        for name, value in metrics.items():
            tf.summary.scalar(name, value, step=step)
    writer.close()


# ---- the base class --------------------------------------------------------------


def test_exporter_is_abstract():
    with pytest.raises(TypeError, match="abstract"):
        ke.Exporter()

    class NoName(ke.Exporter):
        def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
            return None

    with pytest.raises(TypeError, match="name"):
        NoName()
    for cls in (ke.LatestExporter, ke.FinalExporter, ke.BestExporter):
        assert issubclass(cls, ke.Exporter)
        assert isinstance(inspect.getattr_static(cls, "name"), property)


# ---- LatestExporter / FinalExporter ------------------------------------------------


def test_latest_exporter_exports_each_time_and_keeps_the_newest(tmp_path):
    est = FakeEstimator(tmp_path)
    assets = {"vocab.txt": str(tmp_path / "vocab.txt")}
    exporter = ke.LatestExporter(
        "latest", serving_fn, assets_extra=assets, as_text=True, exports_to_keep=2
    )
    base = os.path.join(str(tmp_path), "export", "latest")
    os.makedirs(os.path.join(base, "temp-1600000009"))
    os.makedirs(os.path.join(base, "notes"))
    results = [export(exporter, est, step) for step in (10, 20, 30)]
    assert results == [os.path.join(base, str(s)).encode() for s in (1600000001, 1600000002, 1600000003)]
    assert [c["checkpoint_path"] for c in est.calls] == [
        f"{est.model_dir}/model.ckpt-{s}" for s in (10, 20, 30)
    ]
    assert all(c["base"] == base and c["fn"] is serving_fn for c in est.calls)
    assert all(c["assets_extra"] == assets and c["as_text"] is True for c in est.calls)
    # Only the two newest timestamped exports stay; other entries are left alone.
    assert sorted(os.listdir(base)) == ["1600000002", "1600000003", "notes", "temp-1600000009"]


def test_latest_exporter_keeps_all_with_none(tmp_path):
    est = FakeEstimator(tmp_path)
    exporter = ke.LatestExporter("all", serving_fn, exports_to_keep=None)
    for step in range(7):
        export(exporter, est, step)
    assert len(exports_on_disk(est, "all")) == 7


def test_final_exporter_exports_only_the_final_evaluation(tmp_path):
    est = FakeEstimator(tmp_path)
    exporter = ke.FinalExporter("final", serving_fn)
    assert export(exporter, est, 10) is None
    assert export(exporter, est, 20) is None
    result = export(exporter, est, 30, final=True)
    assert result.endswith(b"1600000001")
    assert [c["checkpoint_path"] for c in est.calls] == [f"{est.model_dir}/model.ckpt-30"]
    assert est.calls[0]["assets_extra"] is None and est.calls[0]["as_text"] is False


def test_garbage_collection_tolerates_missing_dirs(tmp_path, monkeypatch):
    assert garbage_collect_exports(str(tmp_path / "missing"), 1) == []
    for name in ("1600000001", "1600000002", "1600000003"):
        (tmp_path / name).mkdir()
    real_rmtree = tf.io.gfile.rmtree

    def racing_rmtree(path):
        real_rmtree(path)
        if path.endswith("1600000001"):
            raise tf.errors.NotFoundError(None, None, "already gone")

    monkeypatch.setattr(tf.io.gfile, "rmtree", racing_rmtree)
    deleted = garbage_collect_exports(str(tmp_path), 1)
    assert [os.path.basename(p) for p in deleted] == ["1600000002"]
    assert sorted(os.listdir(tmp_path)) == ["1600000003"]


# ---- BestExporter ------------------------------------------------------------------


def test_best_exporter_exports_improvements_only(tmp_path):
    est = FakeEstimator(tmp_path)
    exporter = ke.BestExporter(serving_input_receiver_fn=serving_fn, exports_to_keep=2)
    assert exporter.name == "best_exporter"
    outcomes = [
        export(exporter, est, step, loss=loss) is not None
        for step, loss in ((10, 0.9), (20, 0.5), (30, 0.7), (40, 0.5), (50, 0.3))
    ]
    assert outcomes == [True, True, False, False, True]
    assert [c["checkpoint_path"].rsplit("-", 1)[1] for c in est.calls] == ["10", "20", "50"]
    assert len(exports_on_disk(est, "best_exporter")) == 2


def test_best_exporter_with_a_custom_compare_fn(tmp_path):
    def higher_accuracy(best_eval_result, current_eval_result):
        return current_eval_result["accuracy"] > best_eval_result["accuracy"]

    est = FakeEstimator(tmp_path)
    exporter = ke.BestExporter("acc", serving_fn, compare_fn=higher_accuracy)
    outcomes = [
        export(exporter, est, step, accuracy=acc) is not None
        for step, acc in ((1, 0.5), (2, 0.4), (3, 0.8))
    ]
    assert outcomes == [True, False, True]


def test_best_exporter_recovers_the_best_from_event_files(tmp_path):
    est = FakeEstimator(tmp_path)
    write_eval_events(tmp_path / "eval", 10, loss=0.6, accuracy=0.5)
    write_eval_events(tmp_path / "eval", 20, loss=0.4, accuracy=0.7)
    write_eval_events(tmp_path / "eval", 30, loss=0.8, accuracy=0.6)
    os.makedirs(tmp_path / "export" / "best_exporter" / "1500000000")  # an earlier export
    # The evaluation being exported has written its event already: it is
    # compared with the others, not taken as the best.
    write_eval_events(tmp_path / "eval", 40, loss=0.5)
    exporter = ke.BestExporter(serving_input_receiver_fn=serving_fn)
    assert export(exporter, est, 40, loss=0.5) is None  # 0.4 (step 20) is better
    write_eval_events(tmp_path / "eval", 50, loss=0.3)
    assert export(exporter, est, 50, loss=0.3) is not None

    # A new exporter (a restarted process) compares with the best, 0.3.
    write_eval_events(tmp_path / "eval", 60, loss=0.35)
    restarted = ke.BestExporter(serving_input_receiver_fn=serving_fn)
    assert export(restarted, est, 60, loss=0.35) is None
    write_eval_events(tmp_path / "eval", 70, loss=0.25)
    assert export(restarted, est, 70, loss=0.25) is not None


def test_best_exporter_does_not_mistake_the_current_evaluation_for_the_best(tmp_path):
    est = FakeEstimator(tmp_path)
    os.makedirs(tmp_path / "export" / "best_exporter" / "1500000000")
    write_eval_events(tmp_path / "eval", 10, loss=0.75)
    # Estimator.evaluate wrote the current result before the export (values
    # exact in float32, so the event equals the result).
    write_eval_events(tmp_path / "eval", 20, loss=0.5)
    exporter = ke.BestExporter(serving_input_receiver_fn=serving_fn)
    assert export(exporter, est, 20, loss=0.5) is not None


def test_best_exporter_exports_first_when_there_is_no_export_yet(tmp_path):
    est = FakeEstimator(tmp_path)
    write_eval_events(tmp_path / "eval", 10, loss=0.1)
    exporter = ke.BestExporter(serving_input_receiver_fn=serving_fn)
    assert export(exporter, est, 20, loss=0.9) is not None  # nothing exported before
    assert export(exporter, est, 30, loss=0.5) is not None  # better than 0.9


def test_best_exporter_reads_tf1_events_and_skips_unrankable_ones(tmp_path):
    eval_dir = tmp_path / "eval"
    eval_dir.mkdir()
    events = [
        tf.compat.v1.Event(
            step=step,
            wall_time=1.0,
            summary=tf.compat.v1.Summary(
                value=[tf.compat.v1.Summary.Value(tag=k, simple_value=v) for k, v in values.items()]
            ),
        )
        for step, values in ((5, {"auc": 0.8}), (10, {"loss": 0.2}), (15, {"auc": 0.9}), (20, {"loss": 0.6}))
    ]
    with tf.io.TFRecordWriter(str(eval_dir / "events.out.tfevents.1.tf1")) as writer:
        for event in events:
            writer.write(event.SerializeToString())
    assert read_scalars(str(eval_dir / "*.tfevents.*")) == {
        5: {"auc": pytest.approx(0.8)},
        10: {"loss": pytest.approx(0.2)},
        15: {"auc": pytest.approx(0.9)},
        20: {"loss": pytest.approx(0.6)},
    }
    est = FakeEstimator(tmp_path)
    os.makedirs(tmp_path / "export" / "best_exporter" / "1500000000")
    exporter = ke.BestExporter(serving_input_receiver_fn=serving_fn)
    assert export(exporter, est, 30, loss=0.3) is None  # 0.2 at step 10 is the best
    assert export(exporter, est, 40, loss=0.1) is not None


def test_best_exporter_named_evaluation_and_pattern_none(tmp_path):
    est = FakeEstimator(tmp_path)
    os.makedirs(tmp_path / "export" / "best_exporter" / "1500000000")
    write_eval_events(tmp_path / "eval", 10, loss=0.1)
    write_eval_events(tmp_path / "eval_holdout", 10, loss=0.5)
    exporter = ke.BestExporter(serving_input_receiver_fn=serving_fn)
    exporter.set_evaluation_name("holdout")
    assert exporter.event_files_glob(est.model_dir) == os.path.join(
        est.model_dir, "eval_holdout/*.tfevents.*"
    )
    assert export(exporter, est, 20, loss=0.3) is not None  # beats 0.5, not 0.1
    # Back to the unnamed evaluation: the event files are read again.
    exporter.set_evaluation_name(None)
    assert export(exporter, est, 30, loss=0.2) is None
    # An explicit pattern is kept as given.
    explicit = ke.BestExporter(serving_input_receiver_fn=serving_fn, event_file_pattern="eval/*")
    explicit.set_evaluation_name("holdout")
    assert export(explicit, est, 40, loss=0.2) is None
    # Without a pattern nothing is read: the first export is compared with nothing.
    forgetful = ke.BestExporter(serving_input_receiver_fn=serving_fn, event_file_pattern=None)
    assert export(forgetful, est, 50, loss=0.9) is not None


# ---- argument checks -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "error", "pattern"),
    [
        (lambda: ke.LatestExporter("", serving_fn), ValueError, r"exporter name cannot be empty"),
        (lambda: ke.LatestExporter(None, serving_fn), TypeError, r"exporter name must be a string, got None"),
        (lambda: ke.FinalExporter("final", "serving_fn"), TypeError, r"serving_input_receiver_fn must be a function.*got 'serving_fn'.*build_raw_serving_input_receiver_fn"),
        (lambda: ke.LatestExporter("latest", serving_fn, exports_to_keep=0), ValueError, r"^`exports_to_keep`, if provided, must be a positive number. Got 0.*None to keep every export"),
        (lambda: ke.BestExporter(serving_input_receiver_fn=serving_fn, exports_to_keep=-1), ValueError, r"^`exports_to_keep`, if provided, must be positive number, got -1"),
        (lambda: ke.LatestExporter("latest", serving_fn, exports_to_keep="5"), ValueError, r"Got '5'"),
        (lambda: ke.LatestExporter("latest", serving_fn, assets_extra=["a.txt"]), TypeError, r"assets_extra must be None or a dict.*\['a.txt'\]"),
        (lambda: ke.BestExporter(compare_fn=None), ValueError, r"`compare_fn` must not be None"),
        (lambda: ke.BestExporter(compare_fn=lambda a, b: True), ValueError, r"must take exactly the arguments \['best_eval_result', 'current_eval_result'\]; it lacks \['best_eval_result', 'current_eval_result'\] and has unexpected \['a', 'b'\]"),
        (lambda: ke.BestExporter(compare_fn=lambda best_eval_result, current_eval_result, x: True), ValueError, r"has unexpected \['x'\]"),
        (lambda: ke.BestExporter(event_file_pattern=3), TypeError, r"event_file_pattern must be a glob.*got 3"),
    ],
)
def test_exporter_argument_errors(make, error, pattern):
    with pytest.raises(error, match=pattern):
        make()


def test_export_time_errors(tmp_path):
    est = FakeEstimator(tmp_path)
    with pytest.raises(ValueError, match=r"Exporter 'best_exporter' has no serving_input_receiver_fn"):
        export(ke.BestExporter(), est, 10)

    class NoExport:
        model_dir = str(tmp_path)

    with pytest.raises(TypeError, match=r"cannot export a NoExport: it has no export_saved_model"):
        export(ke.LatestExporter("latest", serving_fn), NoExport(), 10)
    with pytest.raises(ValueError, match=r"best_eval_result cannot be empty or no loss is found"):
        _best_exporter._loss_smaller({"accuracy": 1.0}, {"loss": 1.0})
    with pytest.raises(ValueError, match=r"current_eval_result cannot be empty"):
        _best_exporter._loss_smaller({"loss": 1.0}, {})
    assert _best_exporter._loss_smaller({"loss": 1.0}, {"loss": 0.5})
    assert not _best_exporter._loss_smaller({"loss": 0.5}, {"loss": 0.5})


# ---- real SavedModels through train_and_evaluate ----------------------------------------


@pytest.mark.skipif(
    not hasattr(ke.Estimator, "export_saved_model"), reason="Estimator.export_saved_model not available"
)
def test_train_and_evaluate_exports_servable_saved_models(tmp_path):
    est = ke.Estimator(
        mlp_model_fn,
        model_dir=str(tmp_path),
        config=ke.RunConfig(tf_random_seed=1, save_checkpoints_steps=10, log_step_count_steps=None),
        params={"hidden": [8]},
    )
    serving = ke.export.build_raw_serving_input_receiver_fn(
        {"x": tf.TensorSpec([None, X.shape[1]], tf.float32)}
    )
    latest = ke.LatestExporter("latest", serving, exports_to_keep=2)
    best = ke.BestExporter(serving_input_receiver_fn=serving)
    final = ke.FinalExporter("final", serving)
    metrics, results = ke.train_and_evaluate(
        est,
        ke.TrainSpec(input_fn(X, Y), max_steps=30),
        ke.EvalSpec(
            input_fn(X, Y, repeat=False), steps=None, exporters=[latest, best, final], throttle_secs=0
        ),
    )
    assert metrics["global_step"] == 30
    latest_dirs = sorted(os.listdir(tmp_path / "export" / "latest"))
    assert len(latest_dirs) == 2 and all(len(d) == 10 and d.isdigit() for d in latest_dirs)
    assert len(os.listdir(tmp_path / "export" / "final")) == 1
    assert len(os.listdir(tmp_path / "export" / "best_exporter")) == 3  # the loss fell each time
    assert [isinstance(r, bytes) for r in results] == [True, True, True]
    final_dir = results[2].decode()
    assert os.path.dirname(final_dir) == str(tmp_path / "export" / "final")
    assert results[0].decode() == str(tmp_path / "export" / "latest" / latest_dirs[-1])

    # The final export serves the final checkpoint's predictions.
    loaded = tf.saved_model.load(final_dir)
    served = loaded.signatures["serving_default"](x=tf.constant(X[:5]))
    expected = np.stack([p["logits"] for p in est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": X[:5]}).batch(5))])
    np.testing.assert_allclose(served["logits"].numpy(), expected, rtol=1e-5, atol=1e-6)
