"""kverify: machine-checked evidence that Kafka group membership, offset commits and partition leadership stay correct under failures."""
__version__ = "0.1.0"
