"""The reference implementation: pure, deterministic Kafka coordination components (time is an input)."""
