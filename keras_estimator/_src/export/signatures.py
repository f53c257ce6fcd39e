"""The signatures of an export: TF1 SignatureDefs, then TF2 functions.

Each `ExportOutput` describes its signature as tf.estimator did, as a TF1
`SignatureDef` over the serving graph's tensors (input keys, output keys,
method name), for the receiver and each receiver alternative, named
`<output key>` and `<alternative>:<output key>`. Signatures an output cannot
serve (classify or regress without a single string input, outputs that need
an input the receiver does not feed) are left out and logged, as
tf.estimator did.

Each kept SignatureDef becomes a TF2 function: the traced graph pruned from
its input tensors to its outputs, taking `tf.TensorSpec`s named by the input
keys and returning a dict keyed by the output keys; `tf.saved_model.save`
writes it back as a SignatureDef with the same keys.
"""

from __future__ import annotations

import keyword
import logging
import re
from typing import Any

import tensorflow as tf

from keras_estimator._src.base import graph_walks
from keras_estimator._src.tf_internals import deprecation_notices, pruning

logger = logging.getLogger("keras_estimator")

# Signature input names TF2 keeps as given; others it rewrites
# (lower-cases, replaces characters), so serving clients would miss them.
_INPUT_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_METHOD_NAMES = {
    tf.saved_model.PREDICT_METHOD_NAME: "Predict",
    tf.saved_model.CLASSIFY_METHOD_NAME: "Classify",
    tf.saved_model.REGRESS_METHOD_NAME: "Regress",
}


def signature_defs(
    receiver_tensors: dict[str, Any],
    export_outputs: dict[str, Any],
    alternatives: dict[str, dict[str, Any]] | None,
    graph: Any,
) -> dict[str, Any]:
    """One SignatureDef per export output and receiver, as tf.estimator named them.

    A signature its ExportOutput cannot build from the receiver (classify or
    regress without a single string input), or whose outputs need a
    placeholder the receiver does not feed, is left out and logged.
    """
    receivers: list[tuple[str | None, dict[str, Any]]] = [(None, receiver_tensors)]
    receivers += list((alternatives or {}).items())
    included: dict[str, Any] = {}
    excluded: dict[str, str] = {}
    for receiver_name, tensors in receivers:
        for output_key, export_output in export_outputs.items():
            name = output_key or "None"
            if receiver_name is not None:
                name = f"{receiver_name or 'None'}:{name}"
            try:
                with deprecation_notices.quiet():
                    signature_def = export_output.as_signature_def(tensors)
                _check_servable(tensors, signature_def, graph)
            except ValueError as error:
                excluded[name] = str(error)
                continue
            if tf.compat.v1.saved_model.is_valid_signature(signature_def):
                included[name] = signature_def
            else:
                excluded[name] = "not a valid serving signature"
    _log_signatures(included, excluded)
    return included


def _check_servable(inputs: dict[str, Any], signature_def: Any, graph: Any) -> None:
    """Raises ValueError if an output needs a placeholder the inputs don't feed."""
    fed = {t.name for t in tf.nest.flatten(inputs, expand_composites=True)}
    captured = {t.name for t in getattr(graph, "internal_captures", ())}
    pending = [
        graph.get_operation_by_name(_op_name(info.name))
        for info in signature_def.outputs.values()
        if info.name
    ]
    seen: set[str] = set()
    while pending:
        op = pending.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.type == "Placeholder" and not any(
            out.name in fed or out.name in captured for out in op.outputs
        ):
            raise ValueError(
                f"The signature's inputs {sorted(inputs)} are insufficient to "
                f"compute its outputs {sorted(signature_def.outputs)}: they depend "
                f"on placeholder {op.name!r}, which is not an input."
            )
        pending.extend(t.op for t in op.inputs if t.name not in fed)
        pending.extend(op.control_inputs)


def _op_name(tensor_name: str) -> str:
    return tensor_name.split(":")[0]


def _log_signatures(included: dict[str, Any], excluded: dict[str, str]) -> None:
    for method_name, friendly in _METHOD_NAMES.items():
        names = [n for n, s in included.items() if s.method_name == method_name]
        logger.info(
            "Signatures INCLUDED in export for %s: %s", friendly, names or "None"
        )
    for name, reason in excluded.items():
        logger.info("Signature %r EXCLUDED from export: %s", name, reason)
    if not included:
        logger.warning("Export includes no signatures!")
    elif tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY not in included:
        logger.warning("Export includes no default signature!")


def signature_function(
    wrapped: Any,
    graph: Any,
    name: str,
    signature_def: Any,
    assets: list[tuple[Any, Any]] | None = None,
) -> tuple[Any, dict[str, str]]:
    """A tf.function with the signature's named inputs and outputs.

    Returns it, and {argument name: receiver key} for the inputs whose key
    is no Python name (`_argument_names`), which the saved SignatureDef gets
    back (`saved_model_files.rename_signature_inputs`). `assets` pairs
    constants of the graph naming files with `tf.saved_model.Asset`s: the
    function reads each constant's value from its asset's path.
    """
    inputs = {
        key: _dense_tensor(graph, name, "input", key, info)
        for key, info in sorted(signature_def.inputs.items())
    }
    outputs = {
        key: _dense_tensor(graph, name, "output", key, info)
        for key, info in signature_def.outputs.items()
    }
    arguments = _argument_names(inputs)
    # The same tensor may be fed under two keys; prune takes each feed once,
    # from the first key's argument.
    tensors = list(inputs.values())
    positions: dict[str, int] = {}
    for position, tensor in enumerate(tensors):
        positions.setdefault(tensor.name, position)
    feeds = [tensors[position] for position in positions.values()]
    fed_names = {tensor.name for tensor in feeds}
    read = graph_walks.ops_needed_by(outputs.values(), stop_at=fed_names)
    asset_feeds = [
        (t, asset) for t, asset in assets or () if t.op.name in read and t.name not in fed_names
    ]
    pruned = pruning.prune(wrapped, feeds + [t for t, _ in asset_feeds], outputs)

    capture_names = _capture_names(
        len(pruned.captured_inputs), {argument.lower() for argument in arguments.values()}
    )

    def signature(*args: tf.Tensor) -> dict[str, tf.Tensor]:
        # Captured without a name, the variables the pruned graph reads would
        # become inputs named by a number, which tf.saved_model.save renames
        # (and logs at INFO on every export). Capturing them first under valid
        # names leaves it nothing to rename; the signature's own inputs keep
        # the receiver keys either way.
        graph = tf.compat.v1.get_default_graph()
        for tensor, capture_name in zip(
            pruned.captured_inputs, capture_names, strict=True
        ):
            graph.capture(tensor, name=capture_name)
        return pruned(
            *[args[i] for i in positions.values()],
            *[asset.asset_path for _, asset in asset_feeds],
        )

    # A key that is no Python name (`image/encoded`) is an argument of
    # another name here, and gets its key back in the saved signature
    # (`saved_model.write`), as 2.15's SignatureDef had it.
    specs = [tf.TensorSpec(t.shape, t.dtype, name=arguments[key]) for key, t in inputs.items()]
    renamed = {argument: key for key, argument in arguments.items() if argument != key}
    return tf.function(signature, input_signature=specs, autograph=False), renamed


def _argument_names(keys: Any) -> dict[str, str]:
    """Receiver key -> the name of the signature function's argument for it.

    A key that is a Python name is its own. Another gets the name
    TensorFlow's loader looks up for it when a loaded signature is called
    with the key (`input-1`: `input_1`, `0input`: `arg_0input`; a Python
    keyword gets a `_`), made unique among the others whatever their case,
    as `tf.saved_model.save` needs; keys that share such a name (`input-1`
    beside `input_1`) are served by their keys in a TF1 session or TensorFlow
    Serving, which read the SignatureDef, but TensorFlow's loader refuses to
    call the signature with both.
    """
    keys = sorted(keys)
    names = {key: key for key in keys if _INPUT_KEY.fullmatch(key) and not keyword.iskeyword(key)}
    taken = {name.lower() for name in names.values()}
    for key in keys:
        if key in names:
            continue
        base = "".join(c if c.isalnum() else "_" for c in key) or "arg"
        if not base[0].isalpha():
            base = "arg_" + base
        base = re.sub(r"[^A-Za-z0-9_]", "_", base)  # non-ASCII letters too
        if keyword.iskeyword(base):
            base += "_"
        candidate, index = base, 0
        while candidate.lower() in taken:
            index += 1
            candidate = f"{base}_{index}"
        names[key] = candidate
        taken.add(candidate.lower())
    return names


def _capture_names(count: int, taken: set[str]) -> list[str]:
    """`count` valid function-input names, none of them in `taken` (lower case)."""
    names: list[str] = []
    index = 0
    while len(names) < count:
        name = f"captured_{index}"
        if name not in taken:
            names.append(name)
        index += 1
    return names


def _dense_tensor(graph: Any, name: str, side: str, key: str, info: Any) -> tf.Tensor:
    if info.WhichOneof("encoding") != "name":
        fix = (
            "Feed a dense tensor (e.g. serialized tf.Examples) and build sparse "
            "features from it inside the serving_input_receiver_fn."
            if side == "input"
            else "Convert it to a dense tensor."
        )
        raise ValueError(
            f"Signature {name!r} has a sparse or ragged {side} {key!r}; TF2 "
            f"SavedModel signatures take and return dense tensors only. {fix}"
        )
    return graph.get_tensor_by_name(info.name)
