"""The one exception a reference assignor raises when Kafka's own code would throw.

Kafka's sticky assignors throw (IllegalStateException, NullPointerException) on some inputs real
groups can produce; the reference reproduces that instead of silently doing better, and the
answer carries the Java exception name so certification reports it as a `robust` finding.
"""


class AssignorCrash(RuntimeError):
    """Kafka's assignor would throw here; the message starts with the Java exception name."""
