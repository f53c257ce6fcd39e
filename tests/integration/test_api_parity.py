"""The public API matches tf.estimator 2.15's names and signatures.

The reference table (`tf_estimator_2_15_api.tsv`: symbol, kind,
signature_or_value) lists every public tf.estimator 2.15 symbol. Symbols in
`IMPLEMENTED` must exist in `keras_estimator` with the same parameter names,
kinds and defaults, and every symbol of the table is in `IMPLEMENTED`.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

_TSV_NAME = "tf_estimator_2_15_api.tsv"
# The committed copy comes first so the test runs in any checkout.
_TSV_CANDIDATES = (
    Path(__file__).resolve().parents[1] / "data" / _TSV_NAME,
    Path(__file__).resolve().parents[3] / "shared" / "reference" / _TSV_NAME,
)
TSV_PATH = next((path for path in _TSV_CANDIDATES if path.is_file()), None)
if TSV_PATH is None:
    pytest.skip(
        f"API reference table {_TSV_NAME} not found at "
        f"{[str(path) for path in _TSV_CANDIDATES]}",
        allow_module_level=True,
    )

# Where each tf namespace lives in this package. tf.compat.v1.* stand-ins live
# under keras_estimator.compat (as keras_estimator.compat.layers does).
NAMESPACES = (
    ("tf.compat.v1.estimator.", "keras_estimator.compat.estimator."),
    ("tf.estimator.", "keras_estimator."),
)

# Signature the table records when the real one was not introspectable.
NO_SIGNATURE = "(/, *args, **kwargs)"

_RUN_CONFIG_MEMBERS = (
    "checkpoint_save_graph_def",
    "cluster_spec",
    "device_fn",
    "eval_distribute",
    "evaluation_master",
    "experimental_max_worker_delay_secs",
    "global_id_in_cluster",
    "is_chief",
    "keep_checkpoint_every_n_hours",
    "keep_checkpoint_max",
    "log_step_count_steps",
    "master",
    "model_dir",
    "num_ps_replicas",
    "num_worker_replicas",
    "protocol",
    "replace",
    "save_checkpoints_secs",
    "save_checkpoints_steps",
    "save_summary_steps",
    "service",
    "session_config",
    "session_creation_timeout_secs",
    "task_id",
    "task_type",
    "tf_random_seed",
    "train_distribute",
)
_ESTIMATOR_MEMBERS = (
    "config",
    "eval_dir",
    "evaluate",
    "get_variable_names",
    "get_variable_value",
    "latest_checkpoint",
    "model_dir",
    "model_fn",
    "params",
    "predict",
    "train",
)

# TSV symbols that must exist and match. This set grows with the package.
IMPLEMENTED = {
    "tf.estimator.ModeKeys",
    "tf.estimator.ModeKeys.TRAIN",
    "tf.estimator.ModeKeys.EVAL",
    "tf.estimator.ModeKeys.PREDICT",
    "tf.estimator.EstimatorSpec",
    "tf.estimator.RunConfig",
    *(f"tf.estimator.RunConfig.{name}" for name in _RUN_CONFIG_MEMBERS),
    "tf.estimator.Estimator",
    *(f"tf.estimator.Estimator.{name}" for name in _ESTIMATOR_MEMBERS),
    *(
        f"tf.estimator.{name}"
        for name in (
            "SessionRunHook",
            "SessionRunArgs",
            "SessionRunContext",
            "SessionRunValues",
            "SessionRunHook.begin",
            "SessionRunHook.after_create_session",
            "SessionRunHook.before_run",
            "SessionRunHook.after_run",
            "SessionRunHook.end",
            "CheckpointSaverHook",
            "CheckpointSaverListener",
            "CheckpointSaverListener.begin",
            "CheckpointSaverListener.before_save",
            "CheckpointSaverListener.after_save",
            "CheckpointSaverListener.end",
            "FeedFnHook",
            "FinalOpsHook",
            "GlobalStepWaiterHook",
            "LoggingTensorHook",
            "NanLossDuringTrainingError",
            "NanTensorHook",
            "SecondOrStepTimer",
            "StepCounterHook",
            "StopAtStepHook",
            "SummarySaverHook",
            "ProfilerHook",
            "experimental.InMemoryEvaluatorHook",
            "experimental.make_early_stopping_hook",
            "experimental.make_stop_at_checkpoint_step_hook",
            "experimental.stop_if_higher_hook",
            "experimental.stop_if_lower_hook",
            "experimental.stop_if_no_decrease_hook",
            "experimental.stop_if_no_increase_hook",
            "WarmStartSettings",
            "VocabInfo",
            "export.ClassificationOutput",
            "export.EvalOutput",
            "export.ExportOutput",
            "export.PredictOutput",
            "export.RegressionOutput",
            "export.ServingInputReceiver",
            "export.TensorServingInputReceiver",
            "export.build_parsing_serving_input_receiver_fn",
            "export.build_raw_serving_input_receiver_fn",
            "experimental.build_raw_supervised_input_receiver_fn",
            "Estimator.export_saved_model",
            "Estimator.experimental_export_all_saved_models",
            "Estimator.export_savedmodel",
            "TrainSpec",
            "EvalSpec",
            "train_and_evaluate",
            "Exporter",
            "Exporter.export",
            "Exporter.name",
            "LatestExporter",
            "BestExporter",
            "FinalExporter",
        )
    ),
}

# tf.compat.v1.estimator mirror (keras_estimator.compat.estimator).
IMPLEMENTED |= {
    f"tf.compat.v1.estimator.{name}"
    for name in (
        "BestExporter",
        "CheckpointSaverHook",
        "CheckpointSaverListener",
        "Estimator",
        "EstimatorSpec",
        "EvalSpec",
        "Exporter",
        "FeedFnHook",
        "FinalExporter",
        "FinalOpsHook",
        "GlobalStepWaiterHook",
        "LatestExporter",
        "LoggingTensorHook",
        "ModeKeys",
        "NanLossDuringTrainingError",
        "NanTensorHook",
        "ProfilerHook",
        "RunConfig",
        "SecondOrStepTimer",
        "SessionRunArgs",
        "SessionRunContext",
        "SessionRunHook",
        "SessionRunValues",
        "StepCounterHook",
        "StopAtStepHook",
        "SummarySaverHook",
        "TrainSpec",
        "VocabInfo",
        "WarmStartSettings",
        "train_and_evaluate",
        "experimental.InMemoryEvaluatorHook",
        "experimental.build_raw_supervised_input_receiver_fn",
        "experimental.make_early_stopping_hook",
        "experimental.make_stop_at_checkpoint_step_hook",
        "experimental.stop_if_higher_hook",
        "experimental.stop_if_lower_hook",
        "experimental.stop_if_no_decrease_hook",
        "experimental.stop_if_no_increase_hook",
        "export.ClassificationOutput",
        "export.EvalOutput",
        "export.ExportOutput",
        "export.PredictOutput",
        "export.RegressionOutput",
        "export.ServingInputReceiver",
        "export.TensorServingInputReceiver",
        "export.build_parsing_serving_input_receiver_fn",
        "export.build_raw_serving_input_receiver_fn",
        "inputs.numpy_input_fn",
        "inputs.pandas_input_fn",
    )
}

# Premade estimators, heads, parse-spec helpers and logit-fn API, both namespaces.
_PREMADE = (
    "BaselineClassifier",
    "BaselineEstimator",
    "BaselineRegressor",
    "DNNClassifier",
    "DNNEstimator",
    "DNNRegressor",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedEstimator",
    "DNNLinearCombinedRegressor",
    "LinearClassifier",
    "LinearEstimator",
    "LinearRegressor",
)
_HEADS = (
    "Head",
    "BinaryClassHead",
    "MultiClassHead",
    "MultiLabelHead",
    "MultiHead",
    "RegressionHead",
    "PoissonRegressionHead",
    "LogisticRegressionHead",
)
IMPLEMENTED |= {
    f"{namespace}.{name}"
    for namespace in ("tf.estimator", "tf.compat.v1.estimator")
    for name in (
        *_PREMADE,
        *_HEADS,
        "classifier_parse_example_spec",
        "regressor_parse_example_spec",
        "experimental.call_logit_fn",
    )
}
IMPLEMENTED |= {
    f"tf.compat.v1.estimator.tpu.{name}"
    for name in (
        "InputPipelineConfig",
        "RunConfig",
        "TPUConfig",
        "TPUEstimator",
        "TPUEstimatorSpec",
        "experimental.EmbeddingConfigSpec",
    )
}
IMPLEMENTED |= {
    "tf.estimator.add_metrics",
    "tf.compat.v1.estimator.add_metrics",
    "tf.estimator.experimental.LinearSDCA",
    "tf.estimator.experimental.RNNClassifier",
    "tf.estimator.experimental.RNNEstimator",
    "tf.compat.v1.estimator.experimental.KMeans",
    "tf.compat.v1.estimator.experimental.LinearSDCA",
}
IMPLEMENTED |= {
    "tf.compat.v1.estimator.experimental.dnn_logit_fn_builder",
    "tf.compat.v1.estimator.experimental.linear_logit_fn_builder",
}


@dataclasses.dataclass(frozen=True)
class ApiRow:
    symbol: str
    kind: str  # class, function, method, property or attribute
    signature: str  # "(a, b=1)" for callables, repr of the value for attributes


@dataclasses.dataclass(frozen=True)
class Param:
    name: str
    kind: str  # positional, var_positional, keyword_only or var_keyword
    default: Any  # TSV side: text or None; package side: object or _NO_DEFAULT


_NO_DEFAULT = inspect.Parameter.empty


def _load_rows(path: Path) -> dict[str, ApiRow]:
    rows = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    for line in lines[1:]:  # The first line is the header.
        if line.strip():
            symbol, kind, signature = (line.split("\t") + ["", ""])[:3]
            rows[symbol] = ApiRow(symbol, kind, signature)
    return rows


ROWS = _load_rows(TSV_PATH)


# ---------------------------------------------------------------- signatures


def _split_top_level(text: str) -> list[str]:
    """Splits "a, b=(1, 2), c='x,y'" at the commas outside brackets and quotes."""
    parts, current, depth, quote = [], [], 0, None
    for char in text:
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def parse_signature(text: str) -> list[Param]:
    """Parses a signature as the table prints it, e.g. "(a, b=1, *, c=None)"."""
    assert text.startswith("(") and text.endswith(")"), text
    params, keyword_only = [], False
    for part in _split_top_level(text[1:-1]):
        if part == "/":
            continue
        if part == "*":
            keyword_only = True
        elif part.startswith("**"):
            params.append(Param(part[2:], "var_keyword", None))
        elif part.startswith("*"):
            keyword_only = True
            params.append(Param(part[1:], "var_positional", None))
        else:
            name, _, default = part.partition("=")
            kind = "keyword_only" if keyword_only else "positional"
            params.append(Param(name.split(":")[0].strip(), kind, default or None))
    return params


_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
    inspect.Parameter.VAR_POSITIONAL: "var_positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword_only",
    inspect.Parameter.VAR_KEYWORD: "var_keyword",
}


def actual_signature(func: Any, drop_first: bool) -> list[Param]:
    params = [
        Param(p.name, _KINDS[p.kind], p.default)
        for p in inspect.signature(func).parameters.values()
    ]
    return params[1:] if drop_first else params


def default_matches(expected: str | None, actual: Any) -> bool:
    """Compares a printed default with an object; functions compare by name."""
    if expected is None:
        return actual is _NO_DEFAULT
    if actual is _NO_DEFAULT:
        return False
    function = re.fullmatch(r"<function (\S+) at 0x[0-9a-fA-F]+>", expected)
    if function:
        return getattr(actual, "__name__", None) == function.group(1)
    return repr(actual) == expected


def _without_extensions(actual: list[Param], expected: list[Param]) -> list[Param]:
    """Drops trailing keyword-only parameters with defaults that 2.15 lacks.

    Such additions (e.g. `callbacks=`) accept every call that 2.15 accepted,
    so they keep the signature compatible.
    """
    known = {p.name for p in expected}
    kept = list(actual)
    while (
        kept
        and kept[-1].kind == "keyword_only"
        and kept[-1].name not in known
        and kept[-1].default is not inspect.Parameter.empty
    ):
        kept.pop()
    return kept


def signature_problems(expected_text: str, func: Any, drop_first: bool) -> list[str]:
    if expected_text == NO_SIGNATURE:
        return []
    try:
        actual = actual_signature(func, drop_first)
    except (TypeError, ValueError) as err:
        return [f"has no inspectable signature ({err})"]
    expected = parse_signature(expected_text)
    actual = _without_extensions(actual, expected)
    names = [(p.name, p.kind) for p in actual]
    if names != [(p.name, p.kind) for p in expected]:
        return [
            f"parameters {names} != expected {[(p.name, p.kind) for p in expected]}"
        ]
    return [
        f"default of {want.name!r} is {got.default!r}, expected {want.default}"
        for want, got in zip(expected, actual, strict=True)
        if not default_matches(want.default, got.default)
    ]


# ---------------------------------------------------------------- resolving


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


ABSENT = _Absent()


def public_path(symbol: str) -> str:
    for tf_prefix, package_prefix in NAMESPACES:
        if symbol.startswith(tf_prefix):
            return package_prefix + symbol[len(tf_prefix) :]
    raise AssertionError(f"{symbol} is in no known namespace {NAMESPACES}")


def _import_child(module: Any, name: str) -> Any:
    full_name = f"{module.__name__}.{name}"
    try:
        return importlib.import_module(full_name)
    except ModuleNotFoundError as err:
        if err.name is not None and full_name.startswith(err.name):
            return ABSENT
        raise  # A module that exists but fails to import is a real error.


def resolve(path: str) -> tuple[Any, Any]:
    """Returns (object, owning class or None); class members are not bound."""
    parts = path.split(".")
    obj: Any = importlib.import_module(parts[0])
    owner = None
    for part in parts[1:]:
        if inspect.isclass(obj):
            try:
                obj, owner = inspect.getattr_static(obj, part), obj
            except AttributeError:
                return ABSENT, None
        elif hasattr(obj, part):
            obj, owner = getattr(obj, part), None
        elif inspect.ismodule(obj):
            obj, owner = _import_child(obj, part), None
        else:
            return ABSENT, None
        if obj is ABSENT:
            return ABSENT, None
    return obj, owner


def _method_problems(row: ApiRow, raw: Any, owner: Any) -> list[str]:
    if isinstance(raw, staticmethod):
        return signature_problems(row.signature, raw.__func__, drop_first=False)
    if isinstance(raw, classmethod) or inspect.isfunction(raw):
        func = raw.__func__ if isinstance(raw, classmethod) else raw
        return signature_problems(row.signature, func, drop_first=True)
    return [f"is {type(raw).__name__}, expected a method of {owner.__name__}"]


def problems(row: ApiRow, obj: Any, owner: Any) -> list[str]:
    """What is wrong with `obj` as the implementation of `row` ([] when right)."""
    if row.kind == "class":
        if not inspect.isclass(obj):
            return [f"is {type(obj).__name__}, expected a class"]
        return signature_problems(row.signature, obj, drop_first=False)
    if row.kind == "function":
        if inspect.isclass(obj) or not callable(obj):
            return [f"is {type(obj).__name__}, expected a function"]
        return signature_problems(row.signature, obj, drop_first=False)
    if row.kind == "method":
        return _method_problems(row, obj, owner)
    if row.kind == "property":
        if not isinstance(obj, (property, functools.cached_property)):
            return [f"is {type(obj).__name__}, expected a property"]
        return []
    if row.kind == "attribute":
        if repr(obj) != row.signature:
            return [f"value {obj!r} != expected {row.signature}"]
        return []
    return [f"unknown kind {row.kind!r} in the reference table"]


# ---------------------------------------------------------------- tests


def test_reference_table_is_complete():
    assert len(ROWS) > 200
    assert {row.kind for row in ROWS.values()} <= {
        "class",
        "function",
        "method",
        "property",
        "attribute",
    }
    for row in ROWS.values():
        if row.kind in ("class", "function", "method"):
            parse_signature(row.signature)  # Every signature parses.


def test_implemented_names_are_in_the_reference_table():
    assert sorted(IMPLEMENTED - set(ROWS)) == []


@pytest.mark.parametrize("symbol", sorted(IMPLEMENTED))
def test_implemented_symbol_exists_and_matches(symbol):
    row = ROWS[symbol]
    path = public_path(symbol)
    obj, owner = resolve(path)
    assert obj is not ABSENT, f"{path} is missing (implements {symbol})"
    assert problems(row, obj, owner) == [], f"{path} differs from {symbol}"


def test_every_reference_symbol_is_implemented():
    # Every public name of tf.estimator 2.15 is provided and checked above.
    assert sorted(set(ROWS) - IMPLEMENTED) == []


def test_coverage_report():
    present = [
        symbol for symbol in ROWS if resolve(public_path(symbol))[0] is not ABSENT
    ]
    print(
        f"\ntf.estimator 2.15 API coverage: {len(present)} of {len(ROWS)} symbols "
        f"present ({len(IMPLEMENTED)} required by IMPLEMENTED)"
    )
    assert len(present) >= len(IMPLEMENTED & set(present))


# ---------------------------------------------------------------- self-checks


def test_parse_signature_handles_nesting_and_markers():
    params = parse_signature(
        "(a, b=(1, 2), c='x, y', *args, d=<function relu at 0x7f>, **kwargs)"
    )
    assert params == [
        Param("a", "positional", None),
        Param("b", "positional", "(1, 2)"),
        Param("c", "positional", "'x, y'"),
        Param("args", "var_positional", None),
        Param("d", "keyword_only", "<function relu at 0x7f>"),
        Param("kwargs", "var_keyword", None),
    ]
    assert parse_signature("(*, key=None)") == [Param("key", "keyword_only", "None")]
    assert parse_signature("()") == []


def test_defaults_compare_functions_by_name():
    def relu(x):
        return x

    assert default_matches("<function relu at 0x7f29ba8494e0>", relu)
    assert not default_matches("<function relu at 0x7f29ba8494e0>", abs)
    assert default_matches("'Ftrl'", "Ftrl")
    assert default_matches("None", None)
    assert not default_matches("None", _NO_DEFAULT)
    assert default_matches(None, _NO_DEFAULT)


def test_signature_problems_are_reported():
    def good(a, b=1, *, c="x"):
        return a

    def bad(a, b=2, *, c="x"):
        return a

    def renamed(a, bb=1, *, c="x"):
        return a

    expected = "(a, b=1, *, c='x')"
    assert signature_problems(expected, good, drop_first=False) == []
    assert signature_problems(expected, bad, drop_first=False) == [
        "default of 'b' is 2, expected 1"
    ]
    assert "parameters" in signature_problems(expected, renamed, drop_first=False)[0]


def test_resolve_reports_absent_names():
    assert resolve("keras_estimator.DefinitelyNotAName")[0] is ABSENT
    assert resolve("keras_estimator.not_a_module.Thing")[0] is ABSENT
