"""Parsing and strict validation of coordinator scenario files (JSON lines, one scenario per line).

Why strict: a scenario that silently ignores a misspelt field checks nothing. Every op, field,
label, reference, feature and config key is checked here, before any scenario runs, and the first
problem is reported as ONE line naming the file line, the scenario id and the step
(`FormatError`), which the CLI turns into exit code 2.

Request fields that a scenario leaves out take the defaults of Kafka's GroupCoordinatorTest
(3.6) helpers, listed in `REQUEST_OPS` (DefaultSessionTimeout = DefaultRebalanceTimeout = 500,
client `clientId`/`clientHost`, protocols `[["range",""]]`, ...).

kverify extensions (everything else is exactly the format): three optional config keys for the
periodic offset-expiry task (`offsets_expiration_enabled`, default false as in GroupCoordinatorTest,
`offsets_retention_ms`, `offsets_retention_check_interval_ms`); an optional `retention_time_ms` of
`commit` (OffsetCommit v2-v4's retention_time: -1, the default, is none; otherwise KafkaApis
handleOffsetCommitRequest stores expireTimestamp = now + retention_time); the setup op
`delete_partitions` (feature `partition_deletion`: a topic's partitions were deleted,
GroupCoordinator.handleDeletedPartitions); and `at_ms`, where present, must equal the clock (sum of
earlier advances) rather than being purely informational.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

TOPICS = ("join", "sync", "heartbeat", "leave", "commit_fetch", "session_timeout", "rebalance_timeout",
          "initial_delay", "static_membership", "pending_members", "max_size", "protocol_selection",
          "describe_list", "delete", "coordinator_status")
FEATURES = ("group_state_introspection", "group_introspection", "internal_setup", "log_append_error",
            "partition_loading", "exception", "partition_deletion")
STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead")

# config key -> (default, kind)
CONFIG_KEYS = {
    "group_min_session_timeout_ms": (10, "int"),
    "group_max_session_timeout_ms": (600000, "int"),
    "group_initial_rebalance_delay_ms": (50, "int"),
    "group_max_size": (4, "int"),
    "new_member_join_timeout_ms": (300000, "int"),
    "offsets_partitions": (2, "int"),
    "owned_partitions": ([0], "intlist"),
    "loading_partitions": ([], "intlist"),
    "group_partitions": ({}, "dict"),
    # kverify extension of §2 (optional): the periodic offset-expiry task. Off by default, as in
    # GroupCoordinatorTest (startup with enableMetadataExpiration = false); Kafka's broker defaults otherwise.
    "offsets_expiration_enabled": (False, "bool"),
    "offsets_retention_ms": (604800000, "int"),
    "offsets_retention_check_interval_ms": (600000, "int"),
}

_REQ = object()  # marks a required field
DEFAULT_PROTOCOLS = [["range", ""]]

# op -> {field: default or _REQ}; the kinds are checked by `_check_request_field`.
REQUEST_OPS = {
    "join": {"group": _REQ, "member_id": _REQ, "instance_id": None, "protocol_type": "consumer",
             "protocols": DEFAULT_PROTOCOLS, "session_timeout_ms": 500, "rebalance_timeout_ms": 500,
             "require_known_member_id": False, "support_skipping_assignment": True,
             "client_id": "clientId", "client_host": "clientHost"},
    "sync": {"group": _REQ, "generation": _REQ, "member_id": _REQ, "instance_id": None,
             "protocol_type": None, "protocol_name": None, "assignment": {}},
    "heartbeat": {"group": _REQ, "member_id": _REQ, "generation": _REQ, "instance_id": None},
    "leave": {"group": _REQ, "members": _REQ},
    "commit": {"group": _REQ, "offsets": _REQ, "member_id": "", "instance_id": None, "generation": -1,
               "retention_time_ms": -1},
    "fetch_offsets": {"group": _REQ, "require_stable": True, "partitions": None},
    "describe": {"group": _REQ},
    "list_groups": {"states": []},
    "delete_groups": {"groups": _REQ},
    "delete_offsets": {"group": _REQ, "partitions": _REQ},
}

# response fields a reference `$label.field` may name, per request op (bare `$label` = member_id)
RESPONSE_FIELDS = {
    "join": {"member_id": "str", "generation_id": "int", "leader_id": "str", "protocol_type": "str",
             "protocol_name": "str", "error": "str", "skip_assignment": "bool"},
    "sync": {"error": "str", "protocol_type": "str", "protocol_name": "str", "assignment": "bytes"},
    "heartbeat": {"error": "str"},
    "leave": {"error": "str"},
    "commit": {},
    "fetch_offsets": {"error": "str"},
    "describe": {"error": "str", "state": "str", "protocol_type": "str", "protocol": "str"},
    "list_groups": {"error": "str"},
    "delete_groups": {},
    "delete_offsets": {"error": "str"},
}

SETUP_OPS = {
    "advance": ({"ms"}, set(), None),
    "set_log_append_result": ({"error"}, set(), None),   # feature only for a non-NONE error
    "create_group": ({"group", "state", "members"}, {"protocol_type"}, "internal_setup"),
    "force_transition": ({"group", "to"}, set(), "internal_setup"),
    "force_prepare_rebalance": ({"group"}, set(), "internal_setup"),
    "set_partition_loading": ({"partition"}, set(), "partition_loading"),
    "complete_partition_load": ({"partition"}, set(), "partition_loading"),
    "delete_partitions": ({"partitions"}, set(), "partition_deletion"),
}
CREATE_MEMBER_FIELDS = {"member_id": _REQ, "instance_id": None, "client_id": "clientId", "client_host": "clientHost",
                        "rebalance_timeout_ms": 500, "session_timeout_ms": 500, "protocol_type": "consumer",
                        "protocols": DEFAULT_PROTOCOLS}

ALL_KINDS = tuple(REQUEST_OPS)
_ERR_KINDS = ("join", "sync", "heartbeat", "leave", "fetch_offsets", "describe", "list_groups", "delete_offsets")
# expect field -> request ops it applies to
EXPECT_FIELDS = {
    "completed": ALL_KINDS,
    "error": _ERR_KINDS,
    "member_id": ("join",), "generation_id": ("join",), "leader_id": ("join",), "skip_assignment": ("join",),
    "protocol_type": ("join", "sync", "describe"), "protocol_name": ("join", "sync"),
    "member_id_not": ("join",), "leader_id_not": ("join",), "generation_id_not": ("join",),
    "member_id_prefix": ("join",), "members_count": ("join",), "member_instance_ids": ("join",),
    "assignment": ("sync",),
    "raises": ("join",), "message_contains": ("join",),
    "member_errors": ("leave",),
    "partition_errors": ("commit", "delete_offsets"),
    "partitions": ("fetch_offsets",), "partitions_exact": ("fetch_offsets",),
    "partition_count": ("fetch_offsets",), "all_partition_errors": ("fetch_offsets",),
    "state": ("describe",), "protocol": ("describe",), "member_ids": ("describe",), "instance_ids": ("describe",),
    "member_ids_contain": ("describe",), "members_metadata_all_empty": ("describe",),
    "members_assignment_all_empty": ("describe",), "first_member_id": ("describe",),
    "groups_count": ("list_groups",), "groups": ("list_groups",),
    "results": ("delete_groups",), "results_contain": ("delete_groups",), "results_null_key": ("delete_groups",),
}
GROUP_FIELDS = ("exists", "state", "generation_id", "member_count", "member_ids", "has_members", "lacks_members",
                "dynamic_member_ids", "dynamic_member_count", "static_instance_ids", "has_static_instances",
                "lacks_static_instances", "num_pending", "num_new_members", "new_members_exclude", "leader_id",
                "leader_id_not_null", "select_protocol", "select_protocol_not_in",
                "all_members_session_timeout_ms", "all_members_rebalance_timeout_ms")
CHECK_OPS = ("await", "expect", "expect_group", "expect_error_counts", "expect_errors_equal", "expect_any")

_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_REF = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)(?:\.([a-z_]+))?(?:([+-])(\d+))?\Z")
_HEX = re.compile(r"(?:[0-9a-f]{2})*\Z")


class FormatError(ValueError):
    """A file that breaks the scenario format; the message is one line naming where."""


@dataclass(frozen=True)
class Ref:
    """A parsed reference `$label[.field][+N|-N]`."""
    label: str
    field: str
    delta: int
    text: str


@dataclass
class Scenario:
    id: str
    source: str
    topic: str
    tags: list
    features: list
    config: dict              # complete: defaults filled in, group_partitions computed where absent
    steps: list               # the step dicts, request defaults filled in
    notes: str = ""
    line: int = 0
    path: str = ""
    kinds: dict = field(default_factory=dict)   # label -> request op


def parse_ref(text: str):
    """`"$j2.generation_id+1"` -> Ref; a string not starting with `$` -> None; a malformed one -> ValueError."""
    if not isinstance(text, str) or not text.startswith("$"):
        return None
    m = _REF.match(text)
    if not m:
        raise ValueError(f"malformed reference {text!r} (expected $label[.field][+N|-N])")
    label, fld, sign, num = m.groups()
    delta = 0 if num is None else (int(num) if sign == "+" else -int(num))
    return Ref(label, fld or "member_id", delta, text)


def kafka_partition_for(group_id: str, n: int) -> int:
    """Kafka's partitionFor (Utils.abs(hashCode) % n) — the reference coordinator's own function,
    without any behaviour switched on: `group_partitions` in a file must match real Kafka."""
    from kverify.impl.coordinator.partition import partition_for

    return partition_for(group_id, n)


# ---- loading ---------------------------------------------------------------------------------
def load_file(path: str) -> list[Scenario]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise FormatError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return load_text(text, path)


def load_text(text: str, path: str = "<text>") -> list[Scenario]:
    scenarios, seen = [], {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        sc = _scenario(obj, where)
        sc.line, sc.path = lineno, path
        if sc.id in seen:
            raise FormatError(f"{where}: scenario {sc.id!r}: duplicate id (first at line {seen[sc.id]})")
        seen[sc.id] = lineno
        scenarios.append(sc)
    if not scenarios:
        raise FormatError(f"{path}: no scenario in file")
    return scenarios


# ---- validation ------------------------------------------------------------------------------
class _Ctx:
    def __init__(self, where, sid):
        self.where, self.sid, self.step = where, sid, None
        self.ref_type = lambda text: None   # set by _Steps: reference text -> type of the field it names

    def fail(self, msg):
        at = f" step {self.step}" if self.step is not None else ""
        raise FormatError(f"{self.where}: scenario {self.sid!r}{at}: {msg}")


def _scenario(obj, where) -> Scenario:
    if not isinstance(obj, dict):
        raise FormatError(f"{where}: a scenario must be a JSON object")
    sid = obj.get("id")
    if not isinstance(sid, str) or not sid:
        raise FormatError(f"{where}: scenario without a string 'id'")
    c = _Ctx(where, sid)
    allowed = {"id", "source", "topic", "tags", "features", "config", "steps", "notes"}
    for k in obj:
        if k not in allowed:
            c.fail(f"unknown top-level key {k!r}")
    for k in ("source", "topic", "config", "steps"):
        if k not in obj:
            c.fail(f"missing top-level key {k!r}")
    if not isinstance(obj["source"], str):
        c.fail("'source' must be a string")
    if obj["topic"] not in TOPICS:
        c.fail(f"unknown topic {obj['topic']!r} (one of {', '.join(TOPICS)})")
    tags = obj.get("tags", [])
    if not isinstance(tags, list) or any(t not in TOPICS for t in tags):
        c.fail(f"'tags' must be a list of topics ({', '.join(TOPICS)})")
    features = obj.get("features", [])
    if not isinstance(features, list) or any(f not in FEATURES for f in features):
        c.fail(f"'features' must be a list of ({', '.join(FEATURES)})")
    notes = obj.get("notes", "")
    if not isinstance(notes, str):
        c.fail("'notes' must be a string")
    config = _config(obj["config"], c)
    if not isinstance(obj["steps"], list) or not obj["steps"]:
        c.fail("'steps' must be a non-empty list")
    sc = Scenario(sid, obj["source"], obj["topic"], list(tags), list(features), config, [], notes)
    _Steps(sc, c).run(obj["steps"])
    return sc


def _config(cfg, c) -> dict:
    if not isinstance(cfg, dict):
        c.fail("'config' must be an object")
    out = {}
    for k in cfg:
        if k not in CONFIG_KEYS:
            c.fail(f"unknown config key {k!r}")
    for k, (default, kind) in CONFIG_KEYS.items():
        v = cfg.get(k, default)
        if kind == "int" and not (isinstance(v, int) and not isinstance(v, bool)):
            c.fail(f"config {k} must be an integer")
        if kind == "bool" and not isinstance(v, bool):
            c.fail(f"config {k} must be a boolean")
        if kind == "intlist" and not (isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)):
            c.fail(f"config {k} must be a list of integers")
        if kind == "dict" and not (isinstance(v, dict) and all(isinstance(x, int) and not isinstance(x, bool) for x in v.values())):
            c.fail(f"config {k} must be an object group id -> partition")
        out[k] = v if kind != "dict" else dict(v)
    n = out["offsets_partitions"]
    if n < 1:
        c.fail("config offsets_partitions must be >= 1")
    for p in out["owned_partitions"] + out["loading_partitions"]:
        if not 0 <= p < n:
            c.fail(f"config partition {p} outside 0..{n - 1}")
    for g, p in out["group_partitions"].items():
        want = kafka_partition_for(g, n)
        if p != want:
            c.fail(f"config group_partitions[{g!r}] = {p}, but Kafka's partitionFor gives {want}")
    return out


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class _Steps:
    """Walks the steps in order, tracking labels, the informational clock and feature use."""

    def __init__(self, sc: Scenario, c: _Ctx):
        self.sc, self.c, self.clock = sc, c, 0
        c.ref_type = lambda text: RESPONSE_FIELDS[self.sc.kinds[self.ref(text, "value").label]][parse_ref(text).field]
        self.features = set(sc.features)
        if "group_introspection" in self.features:
            self.features.add("group_state_introspection")

    def run(self, steps):
        for i, st in enumerate(steps, 1):
            self.c.step = i
            self.sc.steps.append(self.step(st, top=True))
        self.c.step = None

    # -- helpers
    def need(self, feature, what):
        if feature not in self.features:
            self.c.fail(f"{what} needs feature {feature!r}, not declared in 'features'")

    def label(self, lab, what="'of'"):
        if not isinstance(lab, str) or not _LABEL.match(lab):
            self.c.fail(f"{what} must be a label, got {lab!r}")
        if lab not in self.sc.kinds:
            self.c.fail(f"{what} names undefined label {lab!r} (labels must be defined by an earlier step)")
        return self.sc.kinds[lab]

    def refs_in(self, value, path):
        """Validate every reference inside a value (strings and object keys, recursively)."""
        if isinstance(value, str):
            self.ref(value, path)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                self.refs_in(v, f"{path}[{i}]")
        elif isinstance(value, dict):
            for k, v in value.items():
                self.ref(k, f"{path} key")
                self.refs_in(v, f"{path}.{k}")

    def ref(self, text, path):
        try:
            r = parse_ref(text)
        except ValueError as exc:
            self.c.fail(f"{path}: {exc}")
        if r is None:
            return None
        if r.label not in self.sc.kinds:
            self.c.fail(f"{path}: reference {text!r} to undefined label {r.label!r}")
        kind = self.sc.kinds[r.label]
        ftype = RESPONSE_FIELDS[kind].get(r.field)
        if ftype is None:
            self.c.fail(f"{path}: reference {text!r}: a {kind} response has no field {r.field!r}")
        if r.delta and ftype != "int":
            self.c.fail(f"{path}: reference {text!r}: +N/-N needs an integer field, {r.field} is {ftype}")
        return r

    # -- one step
    def step(self, st, top):
        c = self.c
        if not isinstance(st, dict):
            c.fail("a step must be an object")
        op = st.get("op")
        if not isinstance(op, str):
            c.fail("step without 'op'")
        if "at_ms" in st:
            if not top:
                c.fail("'at_ms' is not allowed inside expect_any")
            if not _is_int(st["at_ms"]):
                c.fail("'at_ms' must be an integer")
            if st["at_ms"] != self.clock:
                c.fail(f"'at_ms' is {st['at_ms']} but the clock is {self.clock} (sum of earlier advances)")
        for k, v in st.items():
            if k not in ("op", "as", "of", "other", "alternatives", "at_ms"):
                self.refs_in(v, f"{op}.{k}")
        if op in REQUEST_OPS:
            if not top:
                c.fail(f"request op {op!r} inside expect_any (only check ops allowed)")
            return self.request(op, st)
        if op in SETUP_OPS:
            if not top:
                c.fail(f"op {op!r} inside expect_any (only check ops allowed)")
            return self.setup(op, st)
        if op in CHECK_OPS:
            return self.check(op, st, top)
        c.fail(f"unknown op {op!r}")

    def keys(self, st, required, optional):
        extra = set(st) - set(required) - set(optional) - {"op", "at_ms"}
        if extra:
            self.c.fail(f"{st['op']}: unknown field {sorted(extra)[0]!r}")
        for k in required:
            if k not in st:
                self.c.fail(f"{st['op']}: missing field {k!r}")

    def request(self, op, st):
        spec = REQUEST_OPS[op]
        req = [k for k, d in spec.items() if d is _REQ]
        self.keys(st, req + ["as"], spec)
        lab = st["as"]
        if not isinstance(lab, str) or not _LABEL.match(lab):
            self.c.fail(f"'as' must be a label ([A-Za-z_][A-Za-z0-9_]*), got {lab!r}")
        if lab in self.sc.kinds:
            self.c.fail(f"label {lab!r} defined twice")
        out = {"op": op, "as": lab}
        for k, d in spec.items():
            v = st[k] if k in st else (json.loads(json.dumps(d)) if d is not None else None)
            self.refs_in(v, f"{op}.{k}")
            _check_request_field(op, k, v, self.c)
            out[k] = v
        self.sc.kinds[lab] = op   # defined after its own fields: a step cannot reference itself
        return out

    def setup(self, op, st):
        req, opt, feature = SETUP_OPS[op]
        self.keys(st, req, opt)
        c = self.c
        if feature:
            self.need(feature, f"op {op!r}")
        out = dict(st)
        out.pop("at_ms", None)
        if op == "advance":
            if not _is_int(st["ms"]) or st["ms"] < 0:
                c.fail("advance.ms must be a non-negative integer")
            self.clock += st["ms"]
        elif op == "set_log_append_result":
            if not isinstance(st["error"], str) or not st["error"].isupper():
                c.fail("set_log_append_result.error must be an Errors name")
            if st["error"] != "NONE":
                self.need("log_append_error", "set_log_append_result with a non-NONE error")
        elif op in ("set_partition_loading", "complete_partition_load"):
            if not _is_int(st["partition"]) or not 0 <= st["partition"] < self.sc.config["offsets_partitions"]:
                c.fail(f"{op}.partition must be a partition number of __consumer_offsets")
        elif op == "force_transition":
            _str(st["group"], "force_transition.group", c)
            if st["to"] not in STATES:
                c.fail(f"force_transition.to must be a group state ({', '.join(STATES)})")
        elif op == "force_prepare_rebalance":
            _str(st["group"], "force_prepare_rebalance.group", c)
        elif op == "delete_partitions":
            if not isinstance(st["partitions"], list) or not st["partitions"]:
                c.fail("delete_partitions.partitions must be a non-empty list of \"topic-partition\"")
            for i, tp in enumerate(st["partitions"]):
                _partition(tp, f"delete_partitions.partitions[{i}]", c)
        elif op == "create_group":
            _str(st["group"], "create_group.group", c)
            if st["state"] not in STATES:
                c.fail(f"create_group.state must be a group state ({', '.join(STATES)})")
            if st.get("protocol_type") is not None:
                _str(st["protocol_type"], "create_group.protocol_type", c)
            out.setdefault("protocol_type", None)
            if not isinstance(st["members"], list):
                c.fail("create_group.members must be a list")
            members = []
            for i, m in enumerate(st["members"]):
                if not isinstance(m, dict):
                    c.fail(f"create_group.members[{i}] must be an object")
                for k in m:
                    if k not in CREATE_MEMBER_FIELDS:
                        c.fail(f"create_group.members[{i}]: unknown field {k!r}")
                mm = {}
                for k, d in CREATE_MEMBER_FIELDS.items():
                    if d is _REQ and k not in m:
                        c.fail(f"create_group.members[{i}]: missing field {k!r}")
                    v = m[k] if k in m else (json.loads(json.dumps(d)) if d is not None else None)
                    self.refs_in(v, f"create_group.members[{i}].{k}")
                    _check_request_field("join", k, v, c,
                                         name=f"create_group.members[{i}].{k}")
                    mm[k] = v
                members.append(mm)
            out["members"] = members
        return out

    def check(self, op, st, top):
        c = self.c
        out = dict(st)
        out.pop("at_ms", None)
        if op == "await":
            self.keys(st, ["of"], [])
            self.label(st["of"])
        elif op == "expect":
            self.keys(st, ["of"], list(EXPECT_FIELDS) + ["implicit"])
            kind = self.label(st["of"])
            for k, v in st.items():
                if k in ("op", "of", "at_ms", "implicit"):
                    continue
                if kind not in EXPECT_FIELDS[k]:
                    c.fail(f"expect: field {k!r} does not apply to a {kind} response (label {st['of']!r})")
                self.refs_in(v, f"expect.{k}")
                _check_expect_value(k, v, c)
            if "implicit" in st and not isinstance(st["implicit"], bool):
                c.fail("expect.implicit must be a boolean")
            if "completed" in st and not isinstance(st["completed"], bool):
                c.fail("expect.completed must be a boolean")
            if st.get("completed") is False and len(set(st) - {"op", "of", "at_ms", "completed", "implicit"}):
                c.fail("expect with \"completed\": false cannot check response fields")
            if "raises" in st or "message_contains" in st:
                self.need("exception", "expect.raises")
                if "raises" not in st:
                    c.fail("expect.message_contains needs 'raises'")
        elif op == "expect_group":
            self.keys(st, ["group"], list(GROUP_FIELDS) + ["implicit"])
            _str(st["group"], "expect_group.group", c)
            used = set(st) - {"op", "at_ms", "group", "implicit"}
            if not used:
                c.fail("expect_group checks nothing")
            if used == {"state"}:
                self.need("group_state_introspection", "expect_group on state")
            else:
                self.need("group_introspection", f"expect_group on {sorted(used - {'state'})[0]}")
            for k in used:
                self.refs_in(st[k], f"expect_group.{k}")
                _check_group_value(k, st[k], c)
            if "state" in st and st["state"] not in STATES:
                c.fail(f"expect_group.state must be a group state ({', '.join(STATES)})")
        elif op == "expect_error_counts":
            self.keys(st, ["of", "counts"], [])
            labs = st["of"]
            if not isinstance(labs, list) or not labs:
                c.fail("expect_error_counts.of must be a non-empty list of labels")
            for lab in labs:
                kind = self.label(lab, "expect_error_counts.of")
                if "error" not in RESPONSE_FIELDS[kind]:
                    c.fail(f"expect_error_counts: a {kind} response has no error")
            if not isinstance(st["counts"], dict) or not all(_is_int(n) and n >= 0 for n in st["counts"].values()):
                c.fail("expect_error_counts.counts must map error names to counts")
        elif op == "expect_errors_equal":
            self.keys(st, ["of", "other"], [])
            a, b = st["of"], st["other"]
            if not isinstance(a, list) or not isinstance(b, list) or len(a) != len(b) or not a:
                c.fail("expect_errors_equal: 'of' and 'other' must be non-empty label lists of equal length")
            for lab in a + b:
                kind = self.label(lab, "expect_errors_equal")
                if "error" not in RESPONSE_FIELDS[kind]:
                    c.fail(f"expect_errors_equal: a {kind} response has no error")
        elif op == "expect_any":
            if not top:
                c.fail("expect_any cannot be nested")
            self.keys(st, ["alternatives"], [])
            alts = st["alternatives"]
            if not isinstance(alts, list) or len(alts) < 1 or not all(isinstance(a, list) and a for a in alts):
                c.fail("expect_any.alternatives must be a non-empty list of non-empty step lists")
            out["alternatives"] = [[self.step(s, top=False) for s in alt] for alt in alts]
        return out


def _ref_kind(v, name, c, want, what):
    """For a reference: check the field it names has type `want`; True if `v` is a reference."""
    if not (isinstance(v, str) and v.startswith("$")):
        return False
    got = c.ref_type(v)
    if got != want:
        c.fail(f"{name}: reference {v!r} names a {got} field, {what} needed")
    return True


def _str(v, name, c, nullable=False):
    if v is None and nullable:
        return
    if not isinstance(v, str):
        c.fail(f"{name} must be a string{' or null' if nullable else ''}")
    _ref_kind(v, name, c, "str", "a string")


def _strlist(v, name, c, nullable_items=False):
    if not isinstance(v, list):
        c.fail(f"{name} must be a list of strings")
    for i, x in enumerate(v):
        _str(x, f"{name}[{i}]", c, nullable=nullable_items)


def _hex(v, name, c):
    if _ref_kind(v, name, c, "bytes", "bytes"):
        return
    if not isinstance(v, str) or not _HEX.match(v):
        c.fail(f"{name} must be a lowercase hex string")


def _int(v, name, c):
    if _ref_kind(v, name, c, "int", "an integer"):
        return
    if not _is_int(v):
        c.fail(f"{name} must be an integer")


def _partition(v, name, c):
    if not isinstance(v, str):
        c.fail(f"{name} must be a \"topic-partition\" string")
    topic, _, part = v.rpartition("-")
    if not topic or not part.isdigit():
        c.fail(f"{name}: {v!r} is not \"<topic>-<partition>\"")


def _check_request_field(op, k, v, c, name=None):
    name = name or f"{op}.{k}"
    if k in ("group", "member_id", "client_id", "client_host"):
        _str(v, name, c)
    elif k in ("instance_id", "protocol_name"):
        _str(v, name, c, nullable=True)
    elif k == "protocol_type":
        _str(v, name, c, nullable=(op != "join"))
    elif k in ("session_timeout_ms", "rebalance_timeout_ms", "generation"):
        _int(v, name, c)
    elif k == "retention_time_ms":
        _int(v, name, c)
        if v < -1:
            c.fail(f"{name} must be -1 (none) or a retention in ms")
    elif k in ("require_known_member_id", "support_skipping_assignment", "require_stable"):
        if not isinstance(v, bool):
            c.fail(f"{name} must be a boolean")
    elif k == "protocols":
        if not isinstance(v, list) or not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in v):
            c.fail(f"{name} must be a list of [name, metadata_hex]")
        for i, p in enumerate(v):
            _hex(p[1], f"{name}[{i}] metadata", c)
    elif k == "assignment":
        if not isinstance(v, dict):
            c.fail(f"{name} must be an object member_id -> hex")
        for mk, mv in v.items():
            _str(mk, f"{name} key", c)
            _hex(mv, f"{name}[{mk!r}]", c)
    elif k == "members":   # leave
        if not isinstance(v, list) or not v:
            c.fail(f"{name} must be a non-empty list of {{member_id, instance_id}}")
        for i, m in enumerate(v):
            if not isinstance(m, dict) or "member_id" not in m or set(m) - {"member_id", "instance_id"}:
                c.fail(f"{name}[{i}] must be {{member_id, instance_id}}")
            _str(m["member_id"], f"{name}[{i}].member_id", c)
            _str(m.get("instance_id"), f"{name}[{i}].instance_id", c, nullable=True)
            m.setdefault("instance_id", None)
    elif k == "offsets":
        if not isinstance(v, dict) or not v:
            c.fail(f"{name} must be a non-empty object partition -> {{offset, leader_epoch, metadata}}")
        for tp, o in v.items():
            _partition(tp, f"{name} key", c)
            if not isinstance(o, dict) or "offset" not in o or set(o) - {"offset", "leader_epoch", "metadata"}:
                c.fail(f"{name}[{tp!r}] must be {{offset, leader_epoch, metadata}}")
            _int(o["offset"], f"{name}[{tp!r}].offset", c)
            if o.get("leader_epoch") is not None:
                _int(o["leader_epoch"], f"{name}[{tp!r}].leader_epoch", c)
            _str(o.get("metadata", ""), f"{name}[{tp!r}].metadata", c)
            o.setdefault("leader_epoch", None)
            o.setdefault("metadata", "")
    elif k == "partitions":
        if v is None and op == "fetch_offsets":
            return
        if not isinstance(v, list):
            c.fail(f"{name} must be a list of \"topic-partition\"")
        for i, tp in enumerate(v):
            _partition(tp, f"{name}[{i}]", c)
    elif k == "states":
        _strlist(v, name, c)
    elif k == "groups":
        _strlist(v, name, c, nullable_items=True)


_BOOL_EXPECT = ("completed", "skip_assignment", "members_metadata_all_empty", "members_assignment_all_empty")
_INT_EXPECT = ("generation_id", "generation_id_not", "members_count", "partition_count", "groups_count")
_STR_EXPECT = ("error", "member_id", "leader_id", "member_id_not", "leader_id_not", "member_id_prefix",
               "state", "protocol", "first_member_id", "raises", "all_partition_errors", "results_null_key")


def _check_expect_value(k, v, c):
    name = f"expect.{k}"
    if k in _BOOL_EXPECT:
        if not isinstance(v, bool):
            c.fail(f"{name} must be a boolean")
    elif k in _INT_EXPECT:
        _int(v, name, c)
    elif k in _STR_EXPECT:
        _str(v, name, c)
    elif k in ("protocol_type", "protocol_name"):
        _str(v, name, c, nullable=True)
    elif k == "assignment":
        _hex(v, name, c)
    elif k in ("member_instance_ids",):
        _strlist(v, name, c, nullable_items=True)
    elif k in ("message_contains", "member_errors", "member_ids", "instance_ids", "member_ids_contain"):
        _strlist(v, name, c)
    elif k in ("partition_errors", "results", "results_contain"):
        if not isinstance(v, dict):
            c.fail(f"{name} must be an object -> error name")
        for key, err in v.items():
            _str(key, f"{name} key", c)
            _str(err, f"{name}[{key!r}]", c)
        if k == "partition_errors":
            for tp in v:
                if not tp.startswith("$"):
                    _partition(tp, f"{name} key", c)
    elif k == "partitions":
        if not isinstance(v, dict):
            c.fail(f"{name} must be an object partition -> {{offset, metadata, leader_epoch, error}}")
        for tp, sub in v.items():
            _partition(tp, f"{name} key", c)
            if not isinstance(sub, dict) or set(sub) - {"offset", "metadata", "leader_epoch", "error"}:
                c.fail(f"{name}[{tp!r}] may only list offset, metadata, leader_epoch, error")
            for sk, sv in sub.items():
                if sk in ("offset", "leader_epoch"):
                    if not (sk == "leader_epoch" and sv is None):
                        _int(sv, f"{name}[{tp!r}].{sk}", c)
                else:
                    _str(sv, f"{name}[{tp!r}].{sk}", c)
    elif k == "partitions_exact":
        if not isinstance(v, (dict, list)):
            c.fail(f"{name} must be an object (or list) of partitions")
        for tp in v:
            _partition(tp, f"{name} key", c)
    elif k == "groups":
        if not isinstance(v, list) or any(not (isinstance(g, list) and len(g) == 3) for g in v):
            c.fail(f"{name} must be a list of [group_id, protocol_type, state]")


_GROUP_SET = ("member_ids", "has_members", "lacks_members", "dynamic_member_ids", "static_instance_ids",
              "has_static_instances", "lacks_static_instances", "new_members_exclude", "select_protocol_not_in")


def _check_group_value(k, v, c):
    name = f"expect_group.{k}"
    if k in ("exists", "leader_id_not_null"):
        if not isinstance(v, bool):
            c.fail(f"{name} must be a boolean")
    elif k in _GROUP_SET:
        _strlist(v, name, c)
    elif k in ("state", "select_protocol"):
        _str(v, name, c)
    elif k == "leader_id":
        _str(v, name, c, nullable=True)
    else:   # generation_id, counts, timeouts
        _int(v, name, c)
