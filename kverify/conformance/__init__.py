"""Coordinator conformance scenarios: the JSON-lines format of `shared/reference/coordinator-scenarios.md`.

`format` parses and validates a file (strictly: unknown ops/fields, bad labels and references are
rejected before anything runs), `refs` resolves `$label.field+N` references, `adapter` maps the
format onto the reference coordinator's API, `checks` compares expectations with delivered responses,
and `runner` executes scenarios and reports the first failing step with an expected/actual diff.
"""
