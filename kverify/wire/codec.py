"""Frames, headers and message bodies of the Kafka protocol, through kafka-python's classes.

Bodies are encoded and decoded by kafka-python 3.x (`kafka.protocol`: Kafka's JSON message schemas
and the classes generated from them); responses are written here as plain dicts with the schemas'
snake_case field names and turned into those classes by `build`. Hand-written here: the request and
response headers (kafka-python has them, but its generic header path cost a third of the broker's time
per request, so `read_header`/`frame_response` do the same few fields directly), record-batch framing
(`iter_batches`: base offset, length, last offset delta) and the JSON view of a body for the trace.
"""
from __future__ import annotations

import keyword
import struct

import kafka.errors as _kerrors
from kafka.protocol.data_container import DataContainer
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


_TOP_PLANS: dict = {}


def _top_plan(cls, version):
    """(name, tagged, in version, default) of each field of a top-level message, in schema order; None
    when the version is outside the schema's (the class's own constructor then raises)."""
    key = (cls, version)
    plan = _TOP_PLANS.get(key, False)
    if plan is False:
        st = cls._struct
        plan = None
        if st.min_version <= version <= st.max_version:
            plan = tuple((f.name, f._tag is not None, f.for_version_q(version), f.default) for f in st._fields)
        _TOP_PLANS[key] = plan
    return plan


def build(cls, version: int, fields: dict, nested=False):
    """A kafka-python message (or nested struct) from a dict with snake_case keys, nested dicts/lists.
    Nested structs are filled slot by slot (what DataContainer.__init__ does, without its per-call
    checks: the keys were checked by `_kinds`); fields left out read their schema default. A top-level
    message is filled the way ApiMessage/DataContainer.__init__ fill it (given fields, tags, the
    defaults of the version's other fields), from a plan kept per (class, version)."""
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
        plan = _top_plan(cls, version)
        if plan is None:
            return cls(version=version, **kw)
        obj = object.__new__(cls)
        obj._header = obj._min_version = obj._max_version = None
        obj._version, obj.tags, obj.unknown_tags = version, None, None
        for name, tagged, in_version, default in plan:
            if name in kw:
                setattr(obj, name, kw[name])
                if tagged:
                    if obj.tags is None:
                        obj.tags = set()
                    obj.tags.add(name)
            elif in_version:
                setattr(obj, name, default)
        return obj
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
    if summarize_records and isinstance(value, DataContainer):
        return _render(value)
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


# ---- to_json of a kafka-python message, compiled per (class, version) ------------------------------
# The trace renders the body of every request and response the online checks read (two per request), so
# the broker's cost per request is dominated by it. `to_json(msg)` is by definition
# `to_json(msg.to_dict(json=False))`: kafka-python's generic `to_dict` (a generator per struct, a version
# test per field) walked again by `to_json`. `_render` gives the same dict in one pass with code generated
# per (message class, version): a field is read only when its version has it, primitive values are taken
# as they are, anything else goes through `to_json`, a "records" field through `records_summary`.
# tests/test_wire_render.py compares the two on every served API and version.
_PRIMITIVE = frozenset({str, int, bool, float, type(None)})
_RENDERERS: dict = {}


def _render(obj):
    key = (obj.__class__, obj._version)
    r = _RENDERERS.get(key)
    if r is None:
        r = _RENDERERS[key] = _compile_renderer(*key)
    return r(obj)


def _compile_renderer(cls, version):
    fields = [f for f in cls._struct._fields if version is None or f.for_version_q(version)]
    if any(f.name == "records" and (f.is_struct() or f.is_struct_array()) for f in fields):
        return lambda obj: to_json(obj.to_dict(json=False))          # (no such schema today)
    body, items = [], []
    for i, f in enumerate(fields):
        n = f.name
        read = f"o.{n}" if n.isidentifier() and not keyword.iskeyword(n) else f"getattr(o, {n!r})"
        body.append(f"    v{i} = {read}")
        if f.is_struct():
            expr = f"None if v{i} is None else R(v{i})"
        elif f.is_struct_array():
            expr = f"None if v{i} is None else [R(x) for x in v{i}]"
        elif n == "records":
            expr = f"S(v{i})"
        else:
            expr = f"v{i} if v{i}.__class__ in P else J(v{i})"
        items.append(f"{n!r}: {expr}")
    src = "def render(o):\n" + "\n".join(body + ["    return {" + ", ".join(items) + "}"]) + "\n"
    ns = {"R": _render, "S": records_summary, "J": to_json, "P": _PRIMITIVE}
    exec(compile(src, f"<render {cls.__name__} v{version}>", "exec"), ns)   # noqa: S102 - our own text
    return ns["render"]


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
