"""Reading the object graph of an object-based checkpoint.

Checked on TensorFlow 2.21 (the format is that of 2.15). An object-based
checkpoint stores, under the key `_CHECKPOINTABLE_OBJECT_GRAPH`, a
serialized `TrackableObjectGraph` proto whose attributes give each saved
variable's name at save time (`full_name`) beside its key; TF1's Saver read
such checkpoints by name through it. The proto's module is generated code
TensorFlow does not export.

Private symbols touched: `tensorflow.core.protobuf.trackable_object_graph_pb2`
(`TrackableObjectGraph`, its `nodes`, their `children` (each child's
`node_id` and `local_name`) and `attributes`, and each attribute's `name`,
`full_name` and `checkpoint_key`).
"""

from __future__ import annotations

from typing import NamedTuple

TOUCHES = (
    "tensorflow.core.protobuf.trackable_object_graph_pb2:TrackableObjectGraph",
    "tensorflow.core.protobuf.trackable_object_graph_pb2"
    ":TrackableObjectGraph.DESCRIPTOR.fields_by_name.nodes",
    "tensorflow.core.protobuf.trackable_object_graph_pb2"
    ":TrackableObjectGraph.TrackableObject.DESCRIPTOR.fields_by_name.attributes",
    "tensorflow.core.protobuf.trackable_object_graph_pb2"
    ":TrackableObjectGraph.TrackableObject.SerializedTensor"
    ".DESCRIPTOR.fields_by_name.full_name",
    "tensorflow.core.protobuf.trackable_object_graph_pb2"
    ":TrackableObjectGraph.TrackableObject.SerializedTensor"
    ".DESCRIPTOR.fields_by_name.checkpoint_key",
    "tensorflow.core.protobuf.trackable_object_graph_pb2"
    ":TrackableObjectGraph.TrackableObject.SerializedTensor"
    ".DESCRIPTOR.fields_by_name.name",
    "tensorflow.core.protobuf.trackable_object_graph_pb2"
    ":TrackableObjectGraph.TrackableObject.DESCRIPTOR.fields_by_name.children",
    "tensorflow.core.protobuf.trackable_object_graph_pb2"
    ":TrackableObjectGraph.TrackableObject.ObjectReference"
    ".DESCRIPTOR.fields_by_name.node_id",
    "tensorflow.core.protobuf.trackable_object_graph_pb2"
    ":TrackableObjectGraph.TrackableObject.ObjectReference"
    ".DESCRIPTOR.fields_by_name.local_name",
    "tensorflow.python.trackable.base:OBJECT_GRAPH_PROTO_KEY",
)

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


def object_graph_names(serialized: bytes) -> dict[str, str]:
    """Variable name at save time -> checkpoint key, from an object graph."""
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(serialized)
    names: dict[str, str] = {}
    for node in graph.nodes:
        for attribute in node.attributes:
            if attribute.full_name:
                names.setdefault(attribute.full_name, attribute.checkpoint_key)
    return names


class Node(NamedTuple):
    """One object of a checkpoint's object graph (node 0 is the root)."""

    # local name -> the child's node index
    children: dict[str, int]
    # attribute name (VARIABLE_VALUE for a variable) -> checkpoint key
    attributes: dict[str, str]


def object_graph_nodes(serialized: bytes) -> list[Node]:
    """The objects of an object graph, by node index, with their children by name."""
    from tensorflow.core.protobuf import trackable_object_graph_pb2

    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(serialized)
    return [
        Node(
            {child.local_name: child.node_id for child in node.children},
            {attribute.name: attribute.checkpoint_key for attribute in node.attributes},
        )
        for node in graph.nodes
    ]
