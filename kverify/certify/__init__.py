"""Certification of partition assignors: `kverify assignor check TARGET`.

A target is anything that answers assignment problems in issue 3's format (see
`kverify.impl.assignors.problem`): a built-in reference assignor, a Python object, an external
program speaking JSON lines, or a client library's assignor behind an adapter. Problems are
generated with Hypothesis (`scenarios`), checked by named properties (`properties`, with the
sticky optimum from Z3 in `optimum`), and failures are shrunk and written as counterexample
records (`check`).

Python target interface (`kverify assignor check module:attribute`): the attribute is an object
(or a class, instantiated without arguments) with a method `assign(problem: dict) -> dict`
taking one problem dict and returning the answer dict `{"id": ..., "assignment": {member:
[[topic, partition], ...]}}` (or `{"id": ..., "error": "..."}`). Optional attributes:
`cooperative` (bool: it follows the cooperative protocol), `claims` (iterable of property
names it claims; default: every property), and `member_order_free` (bool, default True: its
answer does not depend on the order of the members list).
"""
