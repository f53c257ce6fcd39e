"""SavedModel files TensorFlow has no public writer for.

Checked on TensorFlow 2.21. TensorFlow has no public API to write a
SavedModel proto in text format or to (re)write its fingerprint file; the
export uses the proto class and the function `tf.saved_model.save` calls.

Private symbols touched: `tensorflow.core.protobuf.saved_model_pb2.SavedModel`
and `tensorflow.python.saved_model.fingerprinting_utils.write_fingerprint`.
"""

from __future__ import annotations

from collections.abc import Mapping

TOUCHES = (
    "tensorflow.core.protobuf.saved_model_pb2:SavedModel",
    "tensorflow.python.saved_model.fingerprinting_utils:write_fingerprint",
)


def rewrite_saved_model_as_text(export_dir: str) -> None:
    """Replaces `saved_model.pb` by the same proto as `saved_model.pbtxt`.

    The fingerprint (which hashes the binary file) is removed with it, as
    TensorFlow's own text-format writer writes none.
    """
    import os

    import tensorflow as tf
    from google.protobuf import text_format
    from tensorflow.core.protobuf import saved_model_pb2

    binary = os.path.join(export_dir, tf.saved_model.SAVED_MODEL_FILENAME_PB)
    proto = saved_model_pb2.SavedModel()
    with tf.io.gfile.GFile(binary, "rb") as handle:
        proto.ParseFromString(handle.read())
    text = os.path.join(export_dir, tf.saved_model.SAVED_MODEL_FILENAME_PBTXT)
    with tf.io.gfile.GFile(text, "w") as handle:
        handle.write(text_format.MessageToString(proto))
    tf.io.gfile.remove(binary)
    fingerprint = os.path.join(export_dir, "fingerprint.pb")
    if tf.io.gfile.exists(fingerprint):
        tf.io.gfile.remove(fingerprint)


def rename_signature_inputs(export_dir: str, renames: Mapping[str, Mapping[str, str]]) -> None:
    """Renames signature inputs in `saved_model.pb`: signature -> {saved: wanted}.

    `tf.saved_model.save` names a signature's inputs after its function's
    arguments, which must be Python names; 2.15's SignatureDefs took any
    receiver key (`image/encoded`). Loaded, the signature is called with the
    keys its SignatureDef lists (TensorFlow 2.21's loader and TF1's alike).
    """
    import os

    import tensorflow as tf
    from tensorflow.core.protobuf import saved_model_pb2

    binary = os.path.join(export_dir, tf.saved_model.SAVED_MODEL_FILENAME_PB)
    proto = saved_model_pb2.SavedModel()
    with tf.io.gfile.GFile(binary, "rb") as handle:
        proto.ParseFromString(handle.read())
    for meta_graph in proto.meta_graphs:
        for name, renamed in renames.items():
            if name not in meta_graph.signature_def:
                continue
            inputs = meta_graph.signature_def[name].inputs
            for saved, wanted in renamed.items():
                if saved in inputs:
                    info = inputs[saved]
                    inputs[wanted].CopyFrom(info)
                    del inputs[saved]
    with tf.io.gfile.GFile(binary, "wb") as handle:
        handle.write(proto.SerializeToString())


def refresh_saved_model_fingerprint(export_dir: str) -> None:
    """Rewrites `fingerprint.pb` to match the current `saved_model.pb`."""
    from tensorflow.python.saved_model import fingerprinting_utils

    fingerprinting_utils.write_fingerprint(export_dir)
