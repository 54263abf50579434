"""The few protobuf messages of a TensorBoard event file that the reader needs, built with `protobuf` alone.

An event file is a sequence of TFRecords, each holding one serialized `tensorflow.Event`. Reading scalars needs
only part of that schema: `Event.wall_time/step/summary`, `Summary.Value.tag/metadata/simple_value/tensor` (and the
other members of its `value` oneof, so `WhichOneof` names them), the plugin name in `SummaryMetadata`, and the
float/double/string parts of `TensorProto`. We declare those fields by their numbers in TensorFlow's published
`.proto` files (event.proto, summary.proto, tensor.proto) and let protobuf build the classes at import time; every
other field is kept as an unknown field and never looked at. Decoding runs in protobuf's C extension exactly as
with TensorBoard's generated classes, so the core install needs `protobuf` but not `tensorboard` (with its grpcio,
werkzeug and data-server binary). TensorBoard itself stays a dev dependency: the tests and benchmarks write real
event files with its writer.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import (  # type: ignore[import-untyped,unused-ignore]
    descriptor_pb2,
    descriptor_pool,
    message_factory,
)

_PACKAGE = "assessor.tfevent"
_F = descriptor_pb2.FieldDescriptorProto

# (name, number, type, label, message type name or None, oneof index or None)
_Field = tuple[str, int, int, int, str | None, int | None]
_OPTIONAL, _REPEATED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED

_MESSAGES: dict[str, tuple[list[_Field], list[str]]] = {
    "PluginData": ([("plugin_name", 1, _F.TYPE_STRING, _OPTIONAL, None, None),
                    ("content", 2, _F.TYPE_BYTES, _OPTIONAL, None, None)], []),
    "SummaryMetadata": ([("plugin_data", 1, _F.TYPE_MESSAGE, _OPTIONAL, "PluginData", None),
                         ("display_name", 2, _F.TYPE_STRING, _OPTIONAL, None, None)], []),
    "TensorProto": ([("dtype", 1, _F.TYPE_INT32, _OPTIONAL, None, None),
                     ("tensor_content", 4, _F.TYPE_BYTES, _OPTIONAL, None, None),
                     ("float_val", 5, _F.TYPE_FLOAT, _REPEATED, None, None),
                     ("double_val", 6, _F.TYPE_DOUBLE, _REPEATED, None, None),
                     ("string_val", 8, _F.TYPE_BYTES, _REPEATED, None, None)], []),
    # The members of the `value` oneof we do not read are declared as bytes: WhichOneof still names them.
    "Value": ([("tag", 1, _F.TYPE_STRING, _OPTIONAL, None, None),
               ("simple_value", 2, _F.TYPE_FLOAT, _OPTIONAL, None, 0),
               ("obsolete_old_style_histogram", 3, _F.TYPE_BYTES, _OPTIONAL, None, 0),
               ("image", 4, _F.TYPE_BYTES, _OPTIONAL, None, 0),
               ("histo", 5, _F.TYPE_BYTES, _OPTIONAL, None, 0),
               ("audio", 6, _F.TYPE_BYTES, _OPTIONAL, None, 0),
               ("node_name", 7, _F.TYPE_STRING, _OPTIONAL, None, None),
               ("tensor", 8, _F.TYPE_MESSAGE, _OPTIONAL, "TensorProto", 0),
               ("metadata", 9, _F.TYPE_MESSAGE, _OPTIONAL, "SummaryMetadata", None)], ["value"]),
    "Summary": ([("value", 1, _F.TYPE_MESSAGE, _REPEATED, "Value", None)], []),
    "Event": ([("wall_time", 1, _F.TYPE_DOUBLE, _OPTIONAL, None, None),
               ("step", 2, _F.TYPE_INT64, _OPTIONAL, None, None),
               ("file_version", 3, _F.TYPE_STRING, _OPTIONAL, None, 0),
               ("graph_def", 4, _F.TYPE_BYTES, _OPTIONAL, None, 0),
               ("summary", 5, _F.TYPE_MESSAGE, _OPTIONAL, "Summary", 0)], ["what"]),
}


def _build() -> dict[str, Any]:
    schema = descriptor_pb2.FileDescriptorProto(name="assessor_tfevent.proto", package=_PACKAGE, syntax="proto3")
    for name, (fields, oneofs) in _MESSAGES.items():
        message = schema.message_type.add(name=name)
        for oneof in oneofs:
            message.oneof_decl.add(name=oneof)
        for field_name, number, kind, label, type_name, oneof_index in fields:
            field = message.field.add(name=field_name, number=number, type=kind, label=label)
            if type_name is not None:
                field.type_name = f".{_PACKAGE}.{type_name}"
            if oneof_index is not None:
                field.oneof_index = oneof_index
    pool = descriptor_pool.DescriptorPool()
    pool.Add(schema)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
            for name in _MESSAGES}


_CLASSES = _build()
Event: Any = _CLASSES["Event"]
