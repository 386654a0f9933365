"""The safety properties (`always`) and their `sometimes` companions, written once.

Why it exists: every engine (explorer, walker, Hypothesis, Spark, the wire checks) evaluates the same
property objects over small views of a state, so a property cannot mean one thing to one engine and
another to the next.
"""
