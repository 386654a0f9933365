"""The Kafka wire protocol around the reference coordinator (issue 15).

Server side (W1): `server.Broker` (asyncio loop on its own thread or in the foreground), `codec`
(frames and messages through kafka-python's generated classes), `group_api` (wire <-> impl messages),
`data_api` (metadata, produce, fetch, list offsets on `partition_log`), `faults`, `trace`, `control`.
Client side (W2): client.py, checks.py, conformance.py, record.py.
"""
