"""Schemathesis hooks for scripts/check-openapi.sh: the codecs schemathesis does not speak itself.

Anchorage's servers read and answer MessagePack and property lists as well as JSON. Without
these, schemathesis could not send a body in those media types ("Serialization not possible")
and would skip validating answers in them. Generated values are made encodable first: property
lists have no null, and neither format holds integers past 64 bits.
"""

import base64
import datetime
import plistlib
import re

import msgpack
import schemathesis

PLIST_TYPES = ("application/x-plist", "text/xml")
BINARY_PLIST_TYPES = ("application/x-bplist", "application/octet-stream")
MSGPACK_TYPES = ("application/x-msgpack", "application/msgpack", "application/vnd.msgpack")


# What XML 1.0 cannot carry, replaced in what goes into an XML property list.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _encodable(value, drop_none):
    """`value` with what a codec cannot hold replaced: big integers as text, and for property lists
    null dropped and characters XML cannot carry replaced."""
    if drop_none and isinstance(value, str):
        return _NOT_XML.sub("?", value)
    if isinstance(value, dict):
        return {
            _encodable(str(key), drop_none): _encodable(item, drop_none)
            for key, item in value.items()
            if not (drop_none and item is None)
        }
    if isinstance(value, list):
        return [_encodable(item, drop_none) for item in value if not (drop_none and item is None)]
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and not -(2**63) <= value < 2**64:
        return str(value)
    if value is None and drop_none:
        return ""
    if isinstance(value, (str, int, float, bytes, type(None))):
        return value
    return str(value)


@schemathesis.serializer(*PLIST_TYPES)
def plist_serializer(ctx, value):
    return {"data": plistlib.dumps(_encodable(value, drop_none=True), fmt=plistlib.FMT_XML)}


@schemathesis.serializer(*MSGPACK_TYPES)
def msgpack_serializer(ctx, value):
    return {"data": msgpack.packb(_encodable(value, drop_none=False), use_bin_type=True)}


def _json_like(value):
    """A decoded value with dates and bytes as text, as JSON Schema validation expects."""
    if isinstance(value, dict):
        return {str(key): _json_like(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_like(item) for item in value]
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, msgpack.Timestamp):
        return value.to_datetime().isoformat()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    return value


@schemathesis.deserializer(*PLIST_TYPES, *BINARY_PLIST_TYPES)
def plist_deserializer(ctx, response):
    return _json_like(plistlib.loads(response.content))


@schemathesis.deserializer(*MSGPACK_TYPES)
def msgpack_deserializer(ctx, response):
    return _json_like(msgpack.unpackb(response.content, raw=False, strict_map_key=False))
