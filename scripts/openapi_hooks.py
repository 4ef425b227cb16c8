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


class _ClampedDatetime(datetime.datetime):
    """The datetime plistlib makes dates with, clamped to the years Python has (1 to 9999).

    Property lists carry dates far outside them (a binary plist date is any double of seconds from
    2001), and Anchorage's codecs keep such dates exactly; Python's datetime cannot hold them, and
    plistlib then calls the whole document invalid. For checking an answer against the description
    the nearest representable date does, so plistlib is handed this class instead.
    """

    def __new__(cls, *args, **kwargs):
        try:
            return datetime.datetime.__new__(cls, *args, **kwargs)
        except (ValueError, OverflowError):
            year = args[0] if args else kwargs.get("year", 1)
            if isinstance(year, int) and year < 1:
                return datetime.datetime.__new__(cls, 1, 1, 1)
            return datetime.datetime.__new__(cls, 9999, 12, 31, 23, 59, 59)

    def __add__(self, other):
        try:
            return datetime.datetime.__add__(self, other)
        except OverflowError:
            return _ClampedDatetime(1, 1, 1) if other.total_seconds() < 0 else _ClampedDatetime(9999, 12, 31, 23, 59, 59)


def _clamped_timedelta(*args, **kwargs):
    """A timedelta, clamped to the longest Python has: plistlib makes one of a binary date's seconds before it
    adds it to 2001, and a date past about 2.7 million years (or NaN) is more than a timedelta holds."""
    try:
        return datetime.timedelta(*args, **kwargs)
    except (OverflowError, ValueError):
        seconds = kwargs.get("seconds", args[1] if len(args) > 1 else 0)
        return datetime.timedelta.max if seconds > 0 else datetime.timedelta.min


class _PlistDatetimeModule:
    """What plistlib sees as its `datetime` module: the real one, with dates and their distances clamped."""

    timedelta = staticmethod(_clamped_timedelta)
    timezone = datetime.timezone
    UTC = datetime.timezone.utc
    datetime = _ClampedDatetime


@schemathesis.deserializer(*PLIST_TYPES, *BINARY_PLIST_TYPES)
def plist_deserializer(ctx, response):
    # Only while reading (plistlib's writer checks isinstance against its datetime); one worker, so no race.
    plistlib.datetime = _PlistDatetimeModule
    try:
        return _json_like(plistlib.loads(response.content))
    finally:
        plistlib.datetime = datetime


@schemathesis.deserializer(*MSGPACK_TYPES)
def msgpack_deserializer(ctx, response):
    return _json_like(msgpack.unpackb(response.content, raw=False, strict_map_key=False))
