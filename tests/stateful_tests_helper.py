"""Runs the generic Hypothesis machine on the report toy protocol (no database: tests stay pure)."""
import report_toy
from kverify.stateful_tests.machine import run_machine


def run_toy(lossy: bool, seed: int):
    proto = report_toy.make({"limit": 4, "lossy": lossy}, frozenset())
    return run_machine("toy", {"lossy": lossy}, protocol=proto, seed=seed, database=False)
