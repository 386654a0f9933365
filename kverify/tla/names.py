r"""The one mapping between kverify names and TLA+ identifiers (TLA+ identifiers cannot hold '-').

- invariants and behaviours (kebab-case) <-> CamelCase: committed-offset-safety <->
  CommittedOffsetSafety, i-dur <-> IDur, kafka-12890-no-sync-barrier <-> Kafka12890NoSyncBarrier,
  isr-shrinks-to-leader-min-isr-1 <-> IsrShrinksToLeaderMinIsr1;
- actions (snake_case) <-> CamelCase: join_timeout <-> JoinTimeout, inc_hw <-> IncHw;
- state fields (snake_case) <-> variables (lowerCamelCase): next_record <-> nextRecord;
- model parameters (snake_case) <-> UPPER_CASE: max_generation <-> MAX_GENERATION (upper case keeps
  them apart from actions: the group model has both a `failover` parameter and action);
- a step invariant X is checked by TLC through the temporal property `AlwaysX == [][X]_vars`;
- the explorer's own `deadlock` property (a state without actions that the model does not allow
  to end in, `Protocol.allows_terminal`) is TLC's deadlock check plus a stuttering disjunct of Next,
  `AllowedEnd == <allowed end state> /\ UNCHANGED vars` (END_ACTION: not a model action).

Every function refuses a name whose image would not map back to it (ValueError), so the mapping is
reversible by construction: a part must be lower-case letters or digits, not empty.
"""
from __future__ import annotations

import re

_PART = re.compile(r"[a-z][a-z0-9]*|[0-9]+")
_CAMEL_PART = re.compile(r"[A-Z][a-z]*|[0-9]+")
STEP_PREFIX = "Always"


def _camel(parts: list[str], original: str) -> str:
    if not parts or not all(_PART.fullmatch(p) for p in parts):
        raise ValueError(f"{original!r} cannot be mapped to a TLA+ identifier reversibly")
    out = "".join(p[:1].upper() + p[1:] for p in parts)
    # letters glued to digits inside one part ("ab1") would split differently on the way back
    back = [m.group(0).lower() for m in _CAMEL_PART.finditer(out)]
    if back != parts:
        raise ValueError(f"{original!r} cannot be mapped to a TLA+ identifier reversibly")
    return out


def _split_camel(ident: str) -> list[str]:
    parts = [m.group(0) for m in _CAMEL_PART.finditer(ident)]
    if "".join(parts) != ident or not parts:
        raise ValueError(f"{ident!r} is not a CamelCase TLA+ name of the kverify mapping")
    return [p.lower() for p in parts]


def kebab_to_tla(name: str) -> str:
    """Invariant or behaviour name -> TLA+ operator/constant name."""
    return _camel(name.split("-"), name)


def tla_to_kebab(ident: str) -> str:
    return "-".join(_split_camel(ident))


def action_to_tla(name: str) -> str:
    return _camel(name.split("_"), name)


def tla_to_action(ident: str) -> str:
    return "_".join(_split_camel(ident))


def field_to_tla(name: str) -> str:
    """A Python state field (snake_case) -> its TLA+ variable or record field (lowerCamelCase):
    next_record <-> nextRecord, coord <-> coord."""
    tla = action_to_tla(name)
    return tla[:1].lower() + tla[1:]


def tla_to_field(ident: str) -> str:
    return tla_to_action(ident[:1].upper() + ident[1:])


def param_to_tla(name: str) -> str:
    if not re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", name):
        raise ValueError(f"parameter {name!r} cannot be mapped to a TLA+ constant reversibly")
    return name.upper()


def tla_to_param(ident: str) -> str:
    if not re.fullmatch(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)*", ident):
        raise ValueError(f"{ident!r} is not an UPPER_CASE parameter constant")
    return ident.lower()


def is_param_constant(ident: str) -> bool:
    return bool(re.fullmatch(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)*", ident)) and not ident.isdigit()


def step_property(invariant: str) -> str:
    """TLC property checking step invariant `invariant` (kebab-case) on every step."""
    return STEP_PREFIX + kebab_to_tla(invariant)


def invariant_of_property(ident: str) -> str:
    if not ident.startswith(STEP_PREFIX):
        raise ValueError(f"{ident!r} is not a step-invariant property (Always...)")
    return tla_to_kebab(ident[len(STEP_PREFIX):])


# the disjunct of Next that makes a state a legal end for TLC's deadlock check (see above)
END_ACTION = "AllowedEnd"
DEADLOCK = "deadlock"          # the explorer's name for the property TLC's deadlock check mirrors


def invariant_to_tla(name: str) -> str:
    return kebab_to_tla(name)


def tla_to_invariant(ident: str) -> str:
    return tla_to_kebab(ident)
