"""TLA+ specifications of kverify's abstract models, kept in step with the Python models.

- GroupMembership.tla  <-> model "group"       (model/group.py)
- Replication.tla      <-> model "replication" (model/replication.py)
- OffsetsFailover.tla  <-> model "offsets"     (model/offsets.py; instantiates Replication)

Each `<Spec>_<bound>.cfg` is one bound: its CONSTANTS are the model's parameters (UPPER_CASE) and
historical behaviours (CamelCase booleans); kverify/tla/cfg.py turns it into the explorer's
parameters. Names follow kverify/tla/names.py (actions and invariants in CamelCase, step
invariants checked through `Always<Name> == [][Name]_vars`). tests/test_specs.py checks names
(variables, actions in Next, invariant operators, constants) against the Python models;
tests/test_tlc_crosscheck.py runs TLC on every .cfg and the explorer on the same bound and
requires equal distinct-state counts, or the same verdict with a counterexample of the same length.
Run one with `kverify tlc GroupMembership --config GroupMembership_m2p1 [--compare]`.
"""
