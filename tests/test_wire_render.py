"""The broker's fast paths of kverify/wire/codec.py and record.py give exactly what the generic ones give:
`to_json(msg)` (compiled per class and version) equals `to_json(msg.to_dict(json=False))` (kafka-python's
generic walk), `build` of a top-level message equals the class's own constructor, on every served API and
version, with every field filled; and the Recorder's packed event log gives back the events it was given."""
import uuid

import pytest

from kverify.wire import codec
from kverify.wire.record import EventLog

SAMPLES = {"int8": 3, "int16": -2, "int32": 70000, "int64": 1 << 40, "bool": True, "string": "s-é",
           "bytes": b"\x00\xff", "uuid": uuid.UUID(int=12345), "bitfield": {0, 2}, "[]int32": [1, 2],
           "[]int64": [3], "[]string": ["a", "b"]}
# one v2 record batch (61-byte header + one empty record) for "records" fields
BATCH = bytes(8) + (49 + 12).to_bytes(4, "big") + bytes(4) + b"\x02" + bytes(4) + bytes(2) + (0).to_bytes(4, "big") \
    + bytes(8 * 2 + 8 + 2 + 4) + (1).to_bytes(4, "big") + bytes(12)


def _fields(struct, version, depth=0):
    """A value for every field the version has (nested structs and arrays of structs included)."""
    out = {}
    for f in struct._fields:
        if not f.for_version_q(version):
            continue
        if f.is_struct():
            out[f.name] = _fields(f, version, depth + 1)
        elif f.is_struct_array():
            out[f.name] = [_fields(f.array_of, version, depth + 1), _fields(f.array_of, version, depth + 1)]
        elif f.type_str == "records":
            out[f.name] = BATCH
        else:
            out[f.name] = SAMPLES[f.type_str]
    return out


CASES = [(api.name, kind, v) for api in codec.APIS.values() for kind in ("request", "response")
         for v in range(api.min_version, api.max_version + 1)]


@pytest.mark.parametrize("name,kind,version", CASES)
def test_compiled_rendering_and_building_equal_the_generic_ones(name, kind, version):
    api = codec.BY_NAME[name]
    cls = getattr(api, kind)
    fields = _fields(cls._struct, version)
    fast = codec.build(cls, version, fields)
    slow = cls(version=version, **{k: fast.__getattribute__(k) for k in fields})
    assert fast == slow and fast.tags == slow.tags and fast.version == slow.version
    assert bytes(fast.encode(version=version)) == bytes(slow.encode(version=version))
    assert codec.to_json(fast) == codec.to_json(fast.to_dict(json=False))
    if kind == "request":       # the broker renders decoder-made requests (and built responses)
        decoded = cls.decode(bytes(fast.encode(version=version)), version=version)
        assert codec.to_json(decoded) == codec.to_json(decoded.to_dict(json=False))
    empty = codec.build(cls, version, {})                                           # every field defaulted
    assert codec.to_json(empty) == codec.to_json(empty.to_dict(json=False))


def test_rendering_keeps_records_summaries_and_hex_bytes():
    api = codec.BY_NAME["Produce"]
    body = codec.build(api.request, 9, {"topic_data": [{"name": "t0", "partition_data": [
        {"index": 0, "records": BATCH}]}], "acks": -1, "timeout_ms": 5})
    part = codec.to_json(body)["topic_data"][0]["partition_data"][0]
    assert part["records"] == {"size": len(BATCH), "batches": [[0, 0]]}
    sync = codec.build(codec.BY_NAME["SyncGroup"].response, 3, {"error_code": 0, "assignment": b"\x01\xab"})
    assert codec.to_json(sync)["assignment"] == "01ab"


def test_event_log_gives_back_every_event_in_order_packed_or_not():
    log = EventLog()
    events = [{"seq": i, "dir": "in", "body": {"topics": [{"name": "t0", "partitions": [{"i": i}]}]},
               "t": (i, "x"), "b": bytes([i % 256])} for i in range(EventLog.CHUNK * 2 + 5)]
    for ev in events:
        log.append(ev)
    assert len(log) == len(events)
    assert list(log) == events
    events[0]["body"]["topics"][0]["name"] = "changed after the fact"   # a later change does not leak in
    assert next(iter(log))["body"]["topics"][0]["name"] == "t0"
    odd = EventLog()
    for i in range(EventLog.CHUNK):
        odd.append({"seq": i, "obj": object.__new__(type("Opaque", (), {}))} if i == 3 else {"seq": i})
    assert [e["seq"] for e in odd] == list(range(EventLog.CHUNK))         # marshal refused: kept as a copy
