"""SavedModel export of a model_fn's serving graph, with a checkpoint's values.

`Estimator.export_saved_model` delegates here. The export:

1. calls the serving_input_receiver_fn and the model_fn (PREDICT mode)
   together in one `tf.compat.v1.wrap_function` graph, where the receiver's
   placeholders are legal. The trace uses a variable store of its own, so
   the Estimator's live variables are never touched. The model_fn is called
   once, as tf.estimator called it once per export: the store creates each
   variable where the model_fn asks for it, outside the trace, and the
   checkpoint is restored into them by TF1 name once the graph is built;
2. asks each `ExportOutput` for its TF1 `SignatureDef` (input keys, output
   keys, method name), for the receiver and each receiver alternative, and
   leaves out (with a log line) those it cannot serve, as tf.estimator did;
3. turns each signature into a TF2 function: the graph pruned from the
   signature's input tensors to its outputs, called with named
   `tf.TensorSpec`s (steps 2 and 3: `signatures`);
4. saves a `tf.Module` holding the variables with these signatures, then
   sets the classify/regress method names TensorFlow Serving dispatches on
   (`tf.saved_model.save` writes every signature as predict).

The result loads with plain `tf.saved_model.load` and TensorFlow Serving; it
needs nothing from this package. Files are written to `temp-<timestamp>` and
renamed to `<timestamp>` when complete (`export_files`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import tensorflow as tf

from keras_estimator._src.base import package_logger
from keras_estimator._src.base.export_outputs import (
    describe,
    export_outputs_for_predict,
)
from keras_estimator._src.base.mode_keys import ALL_MODES, ModeKeys
from keras_estimator._src.base.serving_input import RECEIVER_TYPES
from keras_estimator._src.checkpoint import checkpoints as _checkpoint
from keras_estimator._src.engine.model_fn_trace import ModelFnTrace
from keras_estimator._src.engine.variable_store import (
    VariableStore,
    is_object_checkpoint,
)
from keras_estimator._src.export import export_files as _export_files
from keras_estimator._src.export import signatures as _export_signatures
from keras_estimator._src.tf_internals import resource_tracking, v1_savers

logger = logging.getLogger("keras_estimator")

_VARIABLE_COLLECTIONS = (
    tf.compat.v1.GraphKeys.GLOBAL_VARIABLES,
    tf.compat.v1.GraphKeys.LOCAL_VARIABLES,
    tf.compat.v1.GraphKeys.METRIC_VARIABLES,
)


def resolve_checkpoint(
    checkpoint_path: str | None,
    latest_checkpoint: str | None,
    model_dir: str,
    warm_start_from: str | None,
) -> str:
    """The checkpoint an export takes its values from.

    `checkpoint_path`, else the latest one in model_dir, else (as
    tf.estimator did) the warm-start checkpoint.

    Raises:
        ValueError: there is none, or `checkpoint_path` does not exist.
    """
    path = checkpoint_path or latest_checkpoint
    if not path and warm_start_from:
        is_dir = tf.io.gfile.isdir(warm_start_from)
        path = (
            _checkpoint.latest(warm_start_from, rewrite_state=False)
            if is_dir
            else warm_start_from
        )
    if not path:
        raise ValueError(
            f"Couldn't find trained model at {model_dir}. Train the Estimator "
            "before exporting, or pass checkpoint_path=<checkpoint prefix>."
        )
    if not tf.io.gfile.exists(f"{path}.index"):
        raise ValueError(
            f"checkpoint_path {path!r} is not a checkpoint (no {path}.index). Pass "
            "a checkpoint prefix such as <model_dir>/model.ckpt-100, or None for "
            "the latest checkpoint."
        )
    return path


def export_all_saved_models(
    trace: ModelFnTrace,
    export_dir_base: str | bytes | os.PathLike[str],
    input_receiver_fn_map: Mapping[str, Any],
    checkpoint_path: str,
    assets_extra: Mapping[str, str] | None = None,
    as_text: bool = False,
) -> bytes:
    """Exports the PREDICT graph of a model_fn as a SavedModel; returns its dir.

    Args:
        trace: what calls the Estimator's model_fn; the model_fn is traced on
            a store of its own, the Estimator's variables are left alone.
        export_dir_base: the export goes to `<export_dir_base>/<timestamp>`.
        input_receiver_fn_map: mode -> receiver fn; only PREDICT is exported.
        checkpoint_path: the checkpoint whose values are exported.
        assets_extra: destination (relative to `assets.extra/`) -> source file.
        as_text: write `saved_model.pbtxt` instead of `saved_model.pb`.

    Raises:
        NotImplementedError: a TRAIN or EVAL graph is requested.
        ValueError / TypeError: bad arguments, receivers or export outputs.
    """
    receiver_fn = _serving_receiver_fn(input_receiver_fn_map)
    extra = _export_files.check_assets_extra(assets_extra)
    base = _export_files.as_path(export_dir_base)
    with _checkpoint_values_in(trace.owned_variables(ModeKeys.PREDICT), checkpoint_path):
        serving = build_serving_model(trace, receiver_fn, checkpoint_path)
        export_dir = _export_files.write_atomically(
            base,
            lambda directory: _write(serving, directory, extra, as_text),
        )
    logger.info("SavedModel written to: %s", export_dir)
    return os.fsencode(export_dir)


@contextlib.contextmanager
def _checkpoint_values_in(
    variables: dict[str, tf.Variable], checkpoint_path: str
) -> Iterator[None]:
    """Gives a model_fn's own variables the checkpoint's values while exporting.

    A model_fn that owns its variables (a Keras model's, `KerasModelFn`)
    is exported with the variables themselves, not the export's restored
    copies: without this they would carry whatever the model held last (its
    initial weights in a new process, or a later step than the checkpoint a
    BestExporter exports). Their values are put back afterwards, so the
    Estimator's own state is untouched.
    """
    if not variables:
        yield
        return
    kept = {name: variable.numpy() for name, variable in variables.items()}
    try:
        _checkpoint.restore(variables, checkpoint_path)
    except ValueError as error:
        raise ValueError(
            f"Could not load the model's variables from {checkpoint_path}: {error}"
        ) from None
    try:
        yield
    finally:
        for name, value in kept.items():
            variables[name].assign(value)


def _write(
    serving: ServingModel, directory: str, extra: dict[str, str], as_text: bool
) -> None:
    with package_logger.root_logger_left_unconfigured():
        tf.saved_model.save(serving.module, directory, signatures=serving.functions)
    _export_files.finish_saved_model(
        directory, serving.method_names, as_text, serving.input_keys
    )
    _export_files.copy_assets_extra(directory, extra)


def _serving_receiver_fn(input_receiver_fn_map: Any) -> Callable[[], Any]:
    if not isinstance(input_receiver_fn_map, Mapping):
        raise TypeError(
            "input_receiver_fn_map must be a dict of ModeKeys -> input receiver "
            f"fn; got {describe(input_receiver_fn_map)}."
        )
    unknown = [mode for mode in input_receiver_fn_map if mode not in ALL_MODES]
    if unknown:
        raise ValueError(
            f"input_receiver_fn_map has keys {unknown} that are not modes; use "
            "ModeKeys.PREDICT (and ModeKeys.TRAIN / ModeKeys.EVAL)."
        )
    for mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
        if input_receiver_fn_map.get(mode):
            raise NotImplementedError(
                f"Exporting the {mode!r} graph (ModeKeys.{mode.upper()}) is not "
                "supported: TF2 SavedModels hold one serving graph, not TF1 "
                "train/eval MetaGraphs with a train_op. Export "
                "ModeKeys.PREDICT, and train or evaluate from the model_dir "
                "checkpoints."
            )
    receiver_fn = input_receiver_fn_map.get(ModeKeys.PREDICT)
    if not receiver_fn:
        raise ValueError(
            f"No valid modes for exporting found. Got {list(input_receiver_fn_map)}. "
            "Map ModeKeys.PREDICT to a serving_input_receiver_fn."
        )
    if not callable(receiver_fn):
        raise TypeError(
            "serving_input_receiver_fn must be a function taking no arguments; got "
            f"{describe(receiver_fn)}."
        )
    return receiver_fn


# ---- the serving graph --------------------------------------------------------
@dataclasses.dataclass
class ServingModel:
    """What gets saved: variables, signature functions and their method names."""

    module: tf.Module
    functions: dict[str, Any]
    method_names: dict[str, str]
    # Signature -> {argument name: receiver key} where they differ.
    input_keys: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class _Trace:
    """What one trace of receiver fn + model_fn produced (graph objects)."""

    graph: Any = None
    signature_defs: dict[str, Any] = dataclasses.field(default_factory=dict)
    # The spec's Scaffold saver when a tf.train.Checkpoint: it reads an
    # object-based checkpoint by its objects' paths, as in 2.15's export.
    scaffold_checkpoint: Any = None
    # Variable name -> the checkpoint key the spec's Scaffold TF1 Saver reads
    # it from, where they differ (a moving average), as 2.15's export read.
    renamed: dict[str, str] = dataclasses.field(default_factory=dict)
    # The graph's ASSET_FILEPATHS constants, each with the file it names.
    asset_paths: list[tuple[Any, str]] = dataclasses.field(default_factory=list)


def build_serving_model(
    trace: ModelFnTrace, receiver_fn: Callable[[], Any], checkpoint_path: str
) -> ServingModel:
    """Traces the serving graph on a fresh store restored from the checkpoint."""
    store = VariableStore()
    store.global_step()
    # One trace: the store creates each variable at once, outside the trace
    # (under tf.init_scope), so the saved functions capture variables that
    # outlive it; the checkpoint's values are restored into them afterwards.
    store.create_at_once = True
    try:
        with resource_tracking.tracking_resources() as resources:
            wrapped, traced = _trace(trace, receiver_fn, store)
    finally:
        store.create_at_once = False
    logger.info("Restoring parameters from %s", checkpoint_path)
    try:
        _checkpoint.restore(
            store.saveable(),
            checkpoint_path,
            scaffold_checkpoint=traced.scaffold_checkpoint,
            renamed=traced.renamed,
        )
    except ValueError as error:
        raise ValueError(
            f"Could not load the serving graph's variables from {checkpoint_path}: "
            f"{error}"
        ) from None
    store.tables.restore(checkpoint_path)
    module = tf.Module()
    module.model_variables = _graph_variables(traced.graph)
    # Lookup tables (vocabulary columns, label vocabularies) live outside the
    # graph; tracked here, they are saved and rebuilt when the model loads.
    module.resources = list(resources)
    # Files named in ASSET_FILEPATHS are copied into the export's assets/, as
    # 2.15's builder copied them; each signature reads the constant naming
    # one from the asset, so a loader gives the copy's path wherever the
    # export is moved.
    assets = [(tensor, tf.saved_model.Asset(path)) for tensor, path in traced.asset_paths]
    module.assets = [asset for _, asset in assets]
    functions = {}
    method_names = {}
    input_keys = {}
    for name, signature_def in sorted(traced.signature_defs.items()):
        functions[name], renamed = _export_signatures.signature_function(
            wrapped, traced.graph, name, signature_def, assets
        )
        method_names[name] = signature_def.method_name
        if renamed:
            input_keys[name] = renamed
    return ServingModel(module, functions, method_names, input_keys)


def _trace(
    model_fn_trace: ModelFnTrace,
    receiver_fn: Callable[[], Any],
    store: VariableStore,
) -> tuple[Any, _Trace]:
    trace = _Trace()

    def serving_graph() -> list[Any]:
        receiver = receiver_fn()
        if not isinstance(receiver, RECEIVER_TYPES):
            raise TypeError(
                "serving_input_receiver_fn must return a ServingInputReceiver or "
                f"TensorServingInputReceiver; got {describe(receiver)}. Return "
                "keras_estimator.export.ServingInputReceiver(features, "
                "receiver_tensors)."
            )
        spec = model_fn_trace.call_with_store(
            receiver.features,
            getattr(receiver, "labels", None),
            ModeKeys.PREDICT,
            store,
            allow_creation=True,
        )
        if spec.mode not in _EXPORTABLE_MODES:
            # 2.15 ran such a spec, but could not export it.
            raise ValueError(
                f"Invalid mode key: {spec.mode}. model_fn returned an "
                f"EstimatorSpec of mode {spec.mode!r}, which has no signatures: "
                "pass the `mode` argument model_fn received to EstimatorSpec."
            )
        export_outputs = export_outputs_for_predict(
            spec.export_outputs, spec.predictions
        )
        saver = getattr(spec.scaffold, "saver", None)
        if is_object_checkpoint(saver):
            trace.scaffold_checkpoint = saver
        elif v1_savers.is_v1_saver(saver):
            trace.renamed = v1_savers.settings(saver).renamed()
        trace.graph = tf.compat.v1.get_default_graph()
        trace.asset_paths = _asset_paths(trace.graph)
        trace.signature_defs = _export_signatures.signature_defs(
            receiver.receiver_tensors,
            export_outputs,
            getattr(receiver, "receiver_tensors_alternatives", None),
            trace.graph,
        )
        return []

    wrapped = tf.compat.v1.wrap_function(serving_graph, signature=[])
    return wrapped, trace


def _asset_paths(graph: Any) -> list[tuple[Any, str]]:
    """The graph's ASSET_FILEPATHS tensors, each once, with the file it names.

    Each must be a scalar string constant, as 2.15's SavedModel builder
    required (with its TypeError).
    """
    paths: dict[str, tuple[Any, str]] = {}
    for tensor in graph.get_collection(tf.compat.v1.GraphKeys.ASSET_FILEPATHS):
        if not isinstance(tensor, tf.Tensor):
            raise TypeError(
                f"Asset path tensor {tensor!r} must be a Tensor: add the file's "
                "path to ASSET_FILEPATHS as tf.constant(path)."
            )
        if tensor.op.type != "Const" or tensor.dtype != tf.string:
            raise TypeError(
                f"Asset path tensor {tensor} must be of type constant and dtype "
                f"string; it is a {tensor.op.type} of {tensor.dtype.name}. Add the "
                "file's path to ASSET_FILEPATHS as tf.constant(path)."
            )
        values = tensor.op.get_attr("value").string_val
        if len(values) != 1 or not values[0]:
            raise TypeError(
                f"Asset path tensor {tensor} must be a scalar naming one file; "
                f"it holds {list(values)!r}."
            )
        paths.setdefault(tensor.name, (tensor, values[0].decode()))
    return list(paths.values())


# The modes 2.15's export took a spec of: ModeKeys and Keras' 'test'/'predict'.
_EXPORTABLE_MODES = (*ALL_MODES, "test", "predict")


def _graph_variables(graph: Any) -> list[tf.Variable]:
    """The variables the serving graph uses, each once.

    Those the store handed out come from the checkpoint. A variable the
    model_fn captured from outside (not created in it, so in no checkpoint)
    is saved with its current value, the value `predict` uses.
    """
    found: dict[int, tf.Variable] = {}
    for key in _VARIABLE_COLLECTIONS:
        for variable in graph.get_collection(key):
            found.setdefault(id(variable), variable)
    for variable in graph.variables:
        if id(variable) not in found:
            logger.info(
                "Exporting variable %s, created outside model_fn, with its "
                "current value.",
                variable.name,
            )
            found[id(variable)] = variable
    return list(found.values())
