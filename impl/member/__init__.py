"""The consumer member: the client side of Kafka's classic group protocol, as a steppable value.

`Member` (member.py) is the state machine, `MemberConfig` (config.py) its static settings,
codec.py the bytes inside JoinGroup/SyncGroup, leader.py what the elected leader computes (the
FIFO test driver is tests/member_harness.py; the world model replaces it).
"""
from kverify.impl.member.config import COOPERATIVE, EAGER, ConfigError, MemberConfig
from kverify.impl.member.member import (DISCONNECT, NO_GENERATION, Generation, InFlight, Member,
                                        MemberState)

__all__ = ["Member", "MemberConfig", "MemberState", "Generation", "InFlight", "NO_GENERATION",
           "DISCONNECT", "EAGER", "COOPERATIVE", "ConfigError"]
