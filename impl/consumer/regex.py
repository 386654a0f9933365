"""Regular-expression subscriptions of KIP-848 (SubscribedTopicRegex, Kafka 4.0+).

Why it exists: a regex is resolved asynchronously by the coordinator, so a member that changes its
regex is for a while subscribed to nothing new; that window is where KAFKA-19974's epoch bump let
two members own one partition at one epoch. Follows GroupMetadataManager.maybeUpdateRegularExpressions
(status NO_CHANGE / REGEX_UPDATED / REGEX_UPDATED_AND_RESOLVED, the refresh conditions with
REGEX_BATCH_REFRESH_MIN_INTERVAL_MS = 10 s and group.consumer.regex.refresh.interval.ms = 10 min)
and handleRegularExpressionsResult (a changed resolution bumps the group epoch). Kafka compiles
RE2/J patterns and matches whole topic names (Pattern.matches); Python's `re.fullmatch` stands in
(same answers for the patterns RE2/J accepts that Python's `re` reads alike; lookarounds and
backreferences, which RE2/J refuses, are refused here too).
"""
from __future__ import annotations

import re

NO_CHANGE, REGEX_UPDATED, REGEX_UPDATED_AND_RESOLVED = "NO_CHANGE", "REGEX_UPDATED", "REGEX_UPDATED_AND_RESOLVED"
BATCH_REFRESH_MIN_INTERVAL_MS = 10_000
_RE2_UNSUPPORTED = re.compile(r"\(\?[=!<]|\\[1-9]")


def is_valid(regex: str) -> bool:
    """throwIfRegularExpressionIsInvalid (RE2/J Pattern.compile)."""
    if _RE2_UNSUPPORTED.search(regex):
        return False
    try:
        re.compile(regex)
    except re.error:
        return False
    return True


def resolve(regex: str, topic_names) -> frozenset:
    """TopicRegexResolver: the existing topic names the whole pattern matches."""
    pattern = re.compile(regex)
    return frozenset(n for n in topic_names if pattern.fullmatch(n))


def update_status(group, member, updated, removal_bumps: bool = True):
    """maybeUpdateRegularExpressions' first half -> (status, require_refresh, regex_to_delete)."""
    old, new = member.subscribed_topic_regex, updated.subscribed_topic_regex
    if old == new:
        return NO_CHANGE, False, None
    status, refresh, delete = REGEX_UPDATED, False, None
    if old and group.num_subscribed_members(old) == 1 and member.member_id in group.members:
        delete = old
    if new:
        if group.num_subscribed_members(new) == 0:
            refresh = True
        elif new in group.resolved_regexes:
            status = REGEX_UPDATED_AND_RESOLVED
    elif old and removal_bumps:
        status = REGEX_UPDATED_AND_RESOLVED        # KAFKA-19899's fix
    return status, refresh, delete
