"""Hypothesis rule-based state machines over the protocols and worlds (see machine.py)."""
