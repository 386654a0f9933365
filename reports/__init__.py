"""The one counterexample record every engine writes, and its renderings.

Why it exists: a person reads a violation in five minutes and a CI job keeps it, whichever engine found
it; `record.py` is that record (replayable with `kverify replay`), the writers render it as JSON,
Markdown, HTML with a sequence diagram, and JUnit XML.
"""
