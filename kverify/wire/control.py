"""The broker's private control request (admin-only; hand-written codec: it is not a Kafka API).

API key 32000 ("KverifyControl"), version 0, never listed in ApiVersions. Request: request header
v1 (INT16 key, INT16 version, INT32 correlation id, INT16-length client id) then INT32 length + UTF-8
JSON object. Response: INT32 correlation id, INT16 error (0 ok, 42 INVALID_REQUEST), INT32 length +
UTF-8 JSON object. Operations (`op`):
  {"op": "advance", "ms": N}        move the broker clock N ms (coordinator timers fire)
  {"op": "clock"}                   read the clock
  {"op": "faults", "spec": SPEC}    replace the fault rules (grammar: kverify/wire/faults.py)
  {"op": "failover", "ms": N, "load": M}   coordinator failover now (see faults.py)
  {"op": "pause", "ms": N} / {"op": "resume"}   stop / restart the real-time clock
  {"op": "kill", "client_id": C}    treat client C as a crashed process (its connections are closed,
                                    now and at their first request later: no LeaveGroup gets through)
Every answer carries "clock_ms" and "handled" (non-control requests handled so far). `control(host, port, op)` is a blocking client for scenario drivers.
"""
from __future__ import annotations

import json
import socket
import struct

CONTROL_KEY = 32000
INVALID_REQUEST = 42


def decode_request(frame: bytes) -> tuple:
    """-> (correlation_id, op dict); ValueError when malformed."""
    if len(frame) < 10:
        raise ValueError("short control request")
    _key, version, corr, clen = struct.unpack_from(">hhih", frame, 0)
    pos = 10 + max(clen, 0)
    if version != 0 or len(frame) < pos + 4:
        raise ValueError("bad control request header")
    (n,) = struct.unpack_from(">i", frame, pos)
    raw = frame[pos + 4:pos + 4 + n]
    if n < 0 or len(raw) != n:
        raise ValueError("bad control request length")
    op = json.loads(raw.decode("utf-8"))
    if not isinstance(op, dict):
        raise ValueError("control request is not a JSON object")
    return corr, op


def encode_response(corr: int, error: int, answer: dict) -> bytes:
    body = json.dumps(answer, sort_keys=True).encode("utf-8")
    payload = struct.pack(">ihi", corr, error, len(body)) + body
    return struct.pack(">i", len(payload)) + payload


def encode_request(corr: int, op: dict, client_id: str = "kverify-control") -> bytes:
    cid = client_id.encode("utf-8")
    body = json.dumps(op).encode("utf-8")
    payload = struct.pack(">hhih", CONTROL_KEY, 0, corr, len(cid)) + cid + struct.pack(">i", len(body)) + body
    return struct.pack(">i", len(payload)) + payload


def _read_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("broker closed the control connection")
        buf += chunk
    return buf


def control(host: str, port: int, op: dict, timeout: float = 10.0) -> dict:
    """Send one control request; returns the answer (raises RuntimeError with the broker's message)."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(encode_request(1, op))
        (size,) = struct.unpack(">i", _read_exact(s, 4))
        data = _read_exact(s, size)
    _corr, err, n = struct.unpack_from(">ihi", data, 0)
    answer = json.loads(data[10:10 + n].decode("utf-8"))
    if err:
        raise RuntimeError(answer.get("error", f"control error {err}"))
    return answer
