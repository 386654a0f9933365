"""Frames, headers and message bodies of the Kafka protocol, through kafka-python's classes.

Bodies are encoded and decoded by kafka-python 3.x (`kafka.protocol`: Kafka's JSON message schemas
and the classes generated from them); responses are written here as plain dicts with the schemas'
snake_case field names and turned into those classes by `build`. Hand-written here: the request and
response headers (kafka-python has them, but its generic header path cost a third of the broker's time
per request, so `read_header`/`frame_response` do the same few fields directly), record-batch framing
(`iter_batches`: base offset, length, last offset delta) and the JSON view of a body for the trace.
"""
from __future__ import annotations

import struct

import kafka.errors as _kerrors
from kafka.protocol.schemas.fields.codecs import EncodeBufferPool
from kafka.protocol.consumer import fetch as _fetch
from kafka.protocol.consumer import group as _group
from kafka.protocol.consumer import metadata as _cmeta
from kafka.protocol.consumer import offsets as _offsets
from kafka.protocol import metadata as _meta
from kafka.protocol.producer import produce as _produce
from kafka.protocol.admin import groups as _agroups


class Api:
    """One served API: its key, name, kafka-python classes and the versions we advertise."""
    __slots__ = ("key", "name", "request", "response", "min_version", "max_version", "_decoders", "_encoders")

    def __init__(self, request, response, min_version, max_version):
        self.key = request.API_KEY
        self.name = request.name[:-len("Request")]
        self.request, self.response = request, response
        self.min_version, self.max_version = min_version, max_version
        self._decoders = {}
        self._encoders = {}

    def flexible(self, version: int) -> bool:
        return self.request.flexible_version_q(version)

    def encoder(self, version: int):
        """kafka-python's compiled response body encoder: (msg, EncodeBuffer) -> None."""
        e = self._encoders.get(version)
        if e is None:
            flex = self.flexible(version)
            e = self._encoders[version] = self.response._struct.compiled_encode_into(
                version, compact=flex, tagged=flex)
        return e

    def decoder(self, version: int):
        """kafka-python's compiled body decoder of this request version: (data, pos) -> (body, pos)."""
        d = self._decoders.get(version)
        if d is None:
            flex = self.flexible(version)
            d = self._decoders[version] = self.request._struct.compiled_decode_from(
                version, compact=flex, tagged=flex, data_class=self.request[None])
        return d


def _pair(name, *mods):
    for m in mods:
        if hasattr(m, name + "Request"):
            return getattr(m, name + "Request"), getattr(m, name + "Response")
    raise ImportError(name)


from kafka.protocol.producer import transaction as _txn
from kverify.wire import kip848 as _kip848
_MODS = (_group, _fetch, _offsets, _meta, _produce, _agroups, _cmeta, _txn, _kip848)
# Versions advertised: every version the three client libraries negotiate for these APIs, flexible ones
# included, stopping before topic ids replace topic names (Fetch 13, Produce 13, OffsetCommit 10,
# OffsetFetch 10). OffsetCommit/OffsetFetch 9 carry KIP-848 member epochs (consumer_api routes them).
_SERVED = [("Produce", 3, 9), ("Fetch", 4, 12), ("ListOffsets", 1, 7), ("Metadata", 0, 12),
           ("OffsetCommit", 2, 9), ("OffsetFetch", 1, 9), ("FindCoordinator", 0, 4), ("JoinGroup", 0, 9),
           ("Heartbeat", 0, 4), ("LeaveGroup", 0, 5), ("SyncGroup", 0, 5), ("DescribeGroups", 0, 5),
           ("ListGroups", 0, 4), ("ApiVersions", 0, 4), ("InitProducerId", 0, 4),
           ("DeleteGroups", 0, 2), ("OffsetDelete", 0, 0),
           ("ConsumerGroupHeartbeat", 0, 1), ("ConsumerGroupDescribe", 0, 0)]     # KIP-848 (consumer_api.py)
APIS: dict = {}
for _n, _lo, _hi in _SERVED:
    _rq, _rs = _pair(_n, *_MODS)
    APIS[_rq.API_KEY] = Api(_rq, _rs, _lo, _hi)
API_VERSIONS_KEY = 18
BY_NAME = {a.name: a for a in APIS.values()}

# Kafka error names (as impl/coordinator/messages.py spells them) -> wire error codes, from kafka-python.
ERROR_CODES: dict = {}
for _v in vars(_kerrors).values():
    if isinstance(_v, type) and issubclass(_v, _kerrors.BrokerResponseError) and isinstance(
            getattr(_v, "errno", None), int) and isinstance(getattr(_v, "message", None), str):
        ERROR_CODES.setdefault(_v.message, _v.errno)
ERROR_CODES["NONE"] = 0
ERROR_NAMES = {v: k for k, v in ERROR_CODES.items()}


def error_code(name: str) -> int:
    """The wire code of a Kafka error name (UNKNOWN_SERVER_ERROR = -1 for names Kafka does not have)."""
    return ERROR_CODES.get(name, -1)


class BadRequest(Exception):
    """A frame that cannot be parsed: the connection is closed (as Kafka's SocketServer does)."""


_PEEK = struct.Struct(">hhi")


def peek(frame) -> tuple:
    """(api_key, api_version, correlation_id) of a request frame (without the size prefix)."""
    if len(frame) < 8:
        raise BadRequest(f"request of {len(frame)} bytes is shorter than a request header")
    return _PEEK.unpack_from(frame, 0)


def _uvarint(data, pos):
    shift = value = 0
    while True:
        if pos >= len(data) or shift > 28:
            raise BadRequest("malformed varint in a request header")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


_CLIENT_ID_LEN = struct.Struct(">h")


def read_header(api: Api, version: int, frame) -> tuple:
    """(client_id, body offset) of a request frame: header v1 (key, version, correlation id, INT16-length
    client id) or v2 (the same + tagged fields) for flexible versions."""
    if len(frame) < 10:
        raise BadRequest("request header truncated")
    (n,) = _CLIENT_ID_LEN.unpack_from(frame, 8)
    pos = 10
    client_id = None
    if n >= 0:
        if pos + n > len(frame):
            raise BadRequest("request header client id truncated")
        try:
            client_id = bytes(frame[pos:pos + n]).decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest("request header client id is not UTF-8") from None
        pos += n
    if api.flexible(version):
        count, pos = _uvarint(frame, pos)
        for _ in range(count):
            _tag, pos = _uvarint(frame, pos)
            size, pos = _uvarint(frame, pos)
            pos += size
        if pos > len(frame):
            raise BadRequest("request header tagged fields truncated")
    return client_id, pos


def decode_request(api: Api, version: int, frame) -> tuple:
    """-> (client_id, body) of a request frame (no size prefix); BadRequest when it does not parse."""
    client_id, pos = read_header(api, version, frame)
    try:
        body, _end = api.decoder(version)(memoryview(frame), pos)
    except Exception as exc:  # noqa: BLE001 - any decoding failure is a malformed request
        raise BadRequest(f"malformed {api.name} v{version} request: {type(exc).__name__}") from None
    return client_id, body


_RESPONSE_HEAD = struct.Struct(">ii")


def frame_response(api: Api, version: int, correlation_id: int, msg) -> bytes:
    """Size prefix + response header (v1 with empty tagged fields for flexible versions, except
    ApiVersions whose response header is always v0) + the body, encoded by kafka-python."""
    head = 9 if api.key != API_VERSIONS_KEY and api.flexible(version) else 8
    with EncodeBufferPool.acquire() as out:
        out.ensure(head)
        out.pos = head
        api.encoder(version)(msg, out)
        _RESPONSE_HEAD.pack_into(out.buf, 0, out.pos - 4, correlation_id)
        if head == 9:
            out.buf[8] = 0
        return bytes(out.result())


_KINDS: dict = {}


def _kinds(cls) -> dict:
    """field name -> (0 plain | 1 struct | 2 struct array, nested data class), cached per class."""
    k = _KINDS.get(cls)
    if k is None:
        k = _KINDS[cls] = {
            name: ((1, f.data_class) if f.is_struct() else (2, f.data_class) if f.is_struct_array() else (0, None))
            for name, f in cls._struct.fields.items()}
    return k


def build(cls, version: int, fields: dict, nested=False):
    """A kafka-python message (or nested struct) from a dict with snake_case keys, nested dicts/lists.
    Nested structs are filled slot by slot (what DataContainer.__init__ does, without its per-call
    checks: the keys were checked by `_kinds`); fields left out read their schema default."""
    kinds = _kinds(cls)
    kw = {}
    for k, v in fields.items():
        kind, dc = kinds[k]
        if kind == 1 and isinstance(v, dict):
            v = build(dc, version, v, True)
        elif kind == 2 and v is not None:
            v = [build(dc, version, x, True) if isinstance(x, dict) else x for x in v]
        kw[k] = v
    if not nested:
        return cls(version=version, **kw)
    obj = object.__new__(cls)
    obj._version, obj.tags, obj.unknown_tags = version, None, None
    for k, v in kw.items():
        setattr(obj, k, v)
    return obj


def encode_response(api: Api, version: int, correlation_id: int, fields: dict) -> bytes:
    """A framed response (size prefix, header, body)."""
    return frame_response(api, version, correlation_id, build(api.response, version, fields))


def to_json(value, summarize_records=True):
    """JSON view of a decoded message (kafka-python object, dict, list): bytes as hex strings, record
    batches summarised as {"size", "batches": [[base_offset, last_offset], ...]}."""
    if hasattr(value, "to_dict"):
        value = value.to_dict(json=False)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k == "records" and summarize_records:
                out[k] = records_summary(v)
            else:
                out[k] = to_json(v, summarize_records)
        return out
    if isinstance(value, (list, tuple)):
        return [to_json(v, summarize_records) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


_BATCH_HEAD = struct.Struct(">qi")


def iter_batches(data):
    """(base_offset, last_offset_delta, start, end) of each v2 record batch in `data`."""
    if not data:
        return
    data = memoryview(bytes(data)) if not isinstance(data, memoryview) else data
    pos, n = 0, len(data)
    while pos + 12 <= n:
        base, length = _BATCH_HEAD.unpack_from(data, pos)
        end = pos + 12 + length
        if length < 49 or end > n:
            raise BadRequest("truncated or malformed record batch")
        if data[pos + 16] != 2:
            raise BadRequest("record batch magic is not 2")
        delta = struct.unpack_from(">i", data, pos + 23)[0]
        yield base, delta, pos, end
        pos = end
    if pos != n:
        raise BadRequest("trailing bytes after the last record batch")


def records_summary(data):
    if data is None:
        return None
    try:
        return {"size": len(data), "batches": [[b, b + d] for b, d, _s, _e in iter_batches(data)]}
    except BadRequest as exc:
        return {"size": len(data), "error": str(exc)}
