"""`keras-estimator check`: statuses read from the code, exit codes, --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keras_estimator._src.base import public_names
from keras_estimator._src.cli import check, known_differences
from keras_estimator._src.cli.main import main

PROGRAMS = Path(__file__).resolve().parent / "programs"


def _statuses(findings):
    return {(f.line, f.name): f.status.value for f in findings}


def _by_name(findings):
    return {f.name: f for f in findings}


def test_supported_program(capsys):
    assert main(["check", str(PROGRAMS / "check_supported.py")]) == 0
    out = capsys.readouterr().out
    assert "tf.estimator.Estimator" in out and "differs" not in out.split("\n\n")[0]
    findings = check.check_files([str(PROGRAMS / "check_supported.py")])
    names = _by_name(findings)
    assert set(names) == {
        "tf.estimator.RunConfig",  # from tensorflow.estimator import RunConfig
        "tf.estimator.ModeKeys",
        "tf.estimator.EstimatorSpec",
        "tf.estimator.Estimator",
        "tf.compat.v1.train.LoggingTensorHook",
        "tf.keras.estimator.model_to_estimator",
        "tf.estimator.export.build_raw_serving_input_receiver_fn",
    }
    assert {f.status for f in findings} == {known_differences.Status.SUPPORTED}
    # Optimizers, losses and Keras layers are TensorFlow's own: not listed.
    assert not any("AdamOptimizer" in f.name or "losses" in f.name for f in findings)


def test_differing_program():
    findings = check.check_files([str(PROGRAMS / "check_differs.py")])
    names = _by_name(findings)
    differs = known_differences.Status.DIFFERS
    # `import tensorflow.compat.v1 as tf`: tf.estimator is tf.compat.v1.estimator.
    for name in (
        "tf.compat.v1.disable_eager_execution",
        "tf.compat.v1.estimator.inputs.numpy_input_fn",
        "tf.compat.v1.estimator.BoostedTreesClassifier",
        "tf.compat.v1.estimator.experimental.KMeans",
        "tf.compat.v1.estimator.tpu.TPUEstimator",
        "tf.compat.v1.estimator.tpu.TPUEstimator(eval_on_tpu=False)",
        "tf.compat.v1.estimator.tpu.TPUEstimator(export_to_tpu=True)",
        "tf.group(<optimizer>.apply_gradients(...), ...)",
    ):
        assert names[name].status is differs, name
        assert names[name].note
    assert (
        "read new batches for each tree layer"
        in names["tf.compat.v1.estimator.BoostedTreesClassifier"].note
    )
    assert main(["check", str(PROGRAMS / "check_differs.py")]) == 0


def test_unsupported_program(capsys):
    path = str(PROGRAMS / "check_unsupported.py")
    assert main(["check", path]) == 1
    out = capsys.readouterr().out
    assert f"{path}:14" in out  # the DNNClasifier typo's line
    findings = check.check_files([path])
    names = _by_name(findings)
    unsupported = known_differences.Status.UNSUPPORTED
    expected = {
        "tf.contrib.slim": "removed in TF 2",
        "tensorflow_estimator.python.estimator.estimator": "private",
        "run_context.session": "SessionRunArgs",
        "tf.estimator.DNNClasifier": "no such name in tf.estimator 2.15",
        "tf.contrib.layers.fully_connected": "removed in TF 2",
        "tf.compat.v1.estimator.tpu.TPUEstimator(embedding_config_spec=object())": (
            "embedding"
        ),
        "tf.compat.v1.Session": "eager execution stays on",
    }
    for name, words in expected.items():
        assert names[name].status is unsupported, name
        assert words in names[name].note, name
    assert names["tf.estimator.SessionRunHook"].status.value == "supported"
    # tensorflow_estimator's top-level `estimator` is the v1 API.
    assert names["tf.compat.v1.estimator.Estimator"].status.value == "supported"


def test_json_output(capsys):
    paths = [str(PROGRAMS / "check_differs.py"), str(PROGRAMS / "check_unsupported.py")]
    assert main(["check", "--json", *paths]) == 1
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"findings", "summary"}
    first = report["findings"][0]
    assert set(first) == {"file", "line", "col", "name", "status", "note"}
    assert {f["file"] for f in report["findings"]} == set(paths)
    assert report["summary"]["unsupported"] == sum(
        f["status"] == "unsupported" for f in report["findings"]
    )
    assert report["summary"]["differs"] > 0


def test_folder_of_programs(capsys):
    assert main(["check", str(PROGRAMS)]) == 1
    assert "uses:" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("source", "name", "status"),
    [
        (
            "import tensorflow as tf\ntf.estimator.LinearClassifier",
            "tf.estimator.LinearClassifier",
            "supported",
        ),
        (
            "import tensorflow as tf\ntf.compat.v2.estimator.DNNRegressor",
            "tf.estimator.DNNRegressor",
            "supported",
        ),
        (
            "from tensorflow.compat.v1.estimator import inputs\ninputs.pandas_input_fn",
            "tf.compat.v1.estimator.inputs.pandas_input_fn",
            "differs",
        ),
        (
            "from tensorflow.estimator import Estimator, Estimater",
            "tf.estimator.Estimater",
            "unsupported",
        ),
        (
            "import tensorflow as tf\ntf.estimator.tpu.TPUEstimator",
            "tf.estimator.tpu",
            "unsupported",
        ),
        (
            "import tensorflow as tf\ntf.estimator.experimental.RNNClassifier",
            "tf.estimator.experimental.RNNClassifier",
            "differs",
        ),
        (
            "import tensorflow as tf\ntf.estimator.experimental.LinearSDCA",
            "tf.estimator.experimental.LinearSDCA",
            "differs",
        ),
        (
            "import tensorflow as tf\ntf.keras.layers.DenseFeatures",
            "tf.keras.layers.DenseFeatures",
            "supported",
        ),
        (
            "import tensorflow as tf\ntf.compat.v1.train.MonitoredTrainingSession()",
            "tf.compat.v1.train.MonitoredTrainingSession",
            "unsupported",
        ),
        (
            "import tensorflow as tf\ntf.estimator.install()",
            "tf.estimator.install",
            "differs",
        ),
        (
            "import tensorflow as tf\ntf.estimator.model_to_estimator(m)",
            "tf.estimator.model_to_estimator",
            "differs",
        ),
        (
            "from tensorflow.keras.estimator import model_to_estimator",
            "tf.keras.estimator.model_to_estimator",
            "supported",
        ),
        (
            "import tensorflow as tf\ntf.estimator.RunConfig(session_config=c)",
            "tf.estimator.RunConfig(session_config=c)",
            "differs",
        ),
        (
            "import tensorflow as tf\ntf.compat.v1.estimator.DNNClassifier([4], [], partitioner=p)",
            "tf.compat.v1.estimator.DNNClassifier(partitioner=p)",
            "differs",
        ),
        (
            "import tensorflow as tf\ntf.compat.v1.layers.dense(x, 3)",
            "tf.compat.v1.layers.dense",
            "differs",
        ),
        (
            "import tensorflow.compat.v1 as tf\ntf.layers.conv2d(x, 3, 3)",
            "tf.compat.v1.layers.conv2d",
            "differs",
        ),
        (
            "import tensorflow as tf\ntf.keras.optimizers.legacy.Adam(0.1)",
            "tf.keras.optimizers.legacy.Adam",
            "differs",
        ),
        ("import tensorflow.contrib.learn as learn", "tf.contrib.learn", "unsupported"),
    ],
)
def test_one_use(source, name, status):
    names = _by_name(check.check_source(source))
    assert name in names, sorted(names)
    assert names[name].status.value == status


_SESSION_RUN = "    with tf1.Session() as sess:\n        sess.run(y)\n"


@pytest.mark.parametrize(
    ("source", "status"),
    [
        # The migration guides' TF1 cells: a session on the program's own graph
        # runs as in TF 1 (tests/programs/migrate_saved_model.py).
        (
            "import tensorflow as tf\nimport tensorflow.compat.v1 as tf1\n"
            "with tf.Graph().as_default() as g:\n" + _SESSION_RUN,
            "supported",
        ),
        (
            "import tensorflow.compat.v1 as tf1\ng = tf1.Graph()\n"
            "with g.as_default():\n" + _SESSION_RUN,
            "supported",
        ),
        (
            "import tensorflow as tf\nimport tensorflow.compat.v1 as tf1\n"
            "with tf.Graph().as_default() as g:\n    pass\n"
            "with g.as_default():\n" + _SESSION_RUN,
            "supported",
        ),
        # Outside such a block, eager execution stays on.
        (
            "import tensorflow.compat.v1 as tf1\nif True:\n" + _SESSION_RUN,
            "unsupported",
        ),
        (
            "import tensorflow as tf\nimport tensorflow.compat.v1 as tf1\n"
            "with tf.Graph().as_default():\n    pass\n"
            "if True:\n" + _SESSION_RUN,
            "unsupported",
        ),
        # A summary writer's as_default() is not a graph.
        (
            "import tensorflow as tf\nimport tensorflow.compat.v1 as tf1\n"
            "w = tf.summary.create_file_writer('d')\n"
            "with w.as_default():\n" + _SESSION_RUN,
            "unsupported",
        ),
    ],
    ids=[
        "graph-as-g",
        "named-graph",
        "named-by-with",
        "no-graph",
        "after-the-block",
        "writer",
    ],
)
def test_a_session_on_the_programs_own_graph_is_supported(source, status):
    names = _by_name(check.check_source(source))
    assert names["tf.compat.v1.Session"].status.value == status


@pytest.mark.parametrize(
    ("source", "fix"),
    [
        ("tf.estimator.DNNClasifier", "did you mean tf.estimator.DNNClassifier?"),
        (
            "tf.estimator.experimental.KMeans",
            "use tf.compat.v1.estimator.experimental.KMeans",
        ),
        ("tf.estimator.tpu.TPUEstimator", "use tf.compat.v1.estimator.tpu"),
        ("tf.compat.v1.estimator.NoSuchThing", "check the spelling"),
    ],
)
def test_unknown_names_say_what_was_meant(source, fix):
    (finding,) = check.check_source(f"import tensorflow as tf\n{source}\n")
    assert finding.status is known_differences.Status.UNSUPPORTED
    assert finding.note.startswith("no such name in tf.estimator 2.15")
    assert finding.note.endswith("fix: " + fix)


def test_keyword_entries_skip_literal_none_and_other_values():
    source = (
        "import tensorflow as tf\n"
        "tf.compat.v1.estimator.tpu.TPUEstimator(embedding_config_spec=None, eval_on_tpu=True)\n"
    )
    names = [f.name for f in check.check_source(source)]
    assert names == ["tf.compat.v1.estimator.tpu.TPUEstimator"]


def test_unrelated_code_finds_nothing(capsys):
    source = "import numpy as np\nnp.estimator = 1\nx = np.estimator.Foo\n"
    assert check.check_source(source) == []


def test_registry_names_exist_in_public_names():
    # Each entry for a name of an estimator namespace names one that exists,
    # so a renamed or removed name cannot leave a stale entry behind.
    every = {row.name for row in public_names.TABLE}
    prefix = known_differences.ESTIMATOR_PREFIX
    for entry in known_differences.KNOWN_DIFFERENCES:
        assert entry.note and "\n" not in entry.note, entry.pattern
        if entry.pattern.startswith(prefix):
            name = entry.pattern[len(prefix) :]
            assert name == "*" or name in every, entry.pattern
        elif entry.pattern.rsplit(".", 1)[0] in check.ESTIMATOR_NAMESPACES:
            path, name = entry.pattern.rsplit(".", 1)
            namespace = check.ESTIMATOR_NAMESPACES[path]
            assert name in public_names.names_in(namespace), entry.pattern


TF215_API = Path(__file__).resolve().parents[1] / "data" / "tf_estimator_2_15_api.tsv"


def test_names_tf_estimator_215_lacked_are_not_plainly_supported():
    # A name of this package's tf.estimator namespaces that tf.estimator 2.15
    # did not have (tests/data/tf_estimator_2_15_api.tsv) is an extension or
    # an older version's name: check must say so, through an entry of
    # keras_estimator/_src/cli/known_differences.py. A new public name fails
    # here until it has one.
    if not TF215_API.is_file():
        pytest.skip(f"{TF215_API} is missing")
    tf215 = {line.split("\t")[0] for line in TF215_API.read_text().splitlines()}
    plain = []
    for path, namespace in check.ESTIMATOR_NAMESPACES.items():
        if namespace == public_names.TF_KERAS_ESTIMATOR:
            continue  # tf.keras's namespace: not in the table
        for name in public_names.names_in(namespace):
            if name in public_names.submodules_of(namespace):
                continue
            full = f"{path}.{name}"
            result = check.classify(full)
            assert result is not None, full
            if full not in tf215 and result[1] is known_differences.Status.SUPPORTED:
                plain.append(full)
            if full in tf215:
                assert "keras_estimator extension" not in result[2], full
    assert not plain, (
        f"{plain} were not in tf.estimator 2.15: give each an entry in "
        "keras_estimator/_src/cli/known_differences.py"
    )


def test_namespaces_come_from_public_names():
    namespaces = check.ESTIMATOR_NAMESPACES
    assert namespaces["tf.compat.v1.estimator.inputs"] == public_names.V1_INPUTS
    assert namespaces["tf.compat.v1.estimator.tpu.experimental"] == (
        public_names.V1_TPU_EXPERIMENTAL
    )
    assert namespaces["tf.estimator.export"] == public_names.EXPORT
    # Every name of every estimator namespace is reported supported or with
    # its registry entry, never as unknown.
    for path, namespace in namespaces.items():
        for name in public_names.names_in(namespace):
            result = check.classify(f"{path}.{name}")
            if name in public_names.submodules_of(namespace):
                continue
            assert result is not None, (path, name)
            assert not result[2].startswith("no such name"), (path, name)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check", "no/such/program.py"], "no such file: no/such/program.py"),
        (["check"], "the following arguments are required"),
    ],
)
def test_errors_are_one_line(argv, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and message in captured.err
    assert "Traceback" not in captured.err


def test_syntax_error_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot parse" in err and "line 1" in err


def test_keywords_of_a_name_imported_from_its_module():
    source = (
        "from tensorflow.compat.v1.estimator.tpu import TPUEstimator\n"
        "est = TPUEstimator(model_fn, eval_on_tpu=False)\n"
    )
    findings = check.check_source(source)
    assert [(f.line, f.name, f.status.value) for f in findings] == [
        (1, "tf.compat.v1.estimator.tpu.TPUEstimator", "differs"),
        (2, "tf.compat.v1.estimator.tpu.TPUEstimator(eval_on_tpu=False)", "differs"),
    ]


@pytest.mark.parametrize("command", [[], ["run"], ["check"], ["inspect"]])
def test_help(command, capsys):
    assert main([*command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: keras-estimator")


def test_a_saver_is_flagged_with_what_of_it_is_used():
    (finding,) = check.check_source("import tensorflow as tf\ntf.compat.v1.train.Saver()\n")
    assert finding.status is known_differences.Status.DIFFERS
    assert "max_to_keep" in finding.note
    assert "renaming variables is refused" in finding.note


def test_init_from_checkpoint_runs_and_is_not_flagged():
    source = "import tensorflow as tf\ntf.compat.v1.train.init_from_checkpoint(c, {'o/': 'o/'})\n"
    assert check.check_source(source) == []
