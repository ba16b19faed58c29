"""The store of sessions' last messages: each caller's share, the store's bound taken from
whoever holds the most, and expired messages making room first."""

from __future__ import annotations

from uuid import uuid4

from app.routing.messages import SessionMessages
from tests.routing.test_cache import Clock


def test_a_full_store_makes_room_from_the_caller_holding_the_most() -> None:
    store = SessionMessages(capacity=6, per_caller=100, ttl_s=60)
    big, small, sender = uuid4(), uuid4(), uuid4()
    for i in range(4):
        store.put(big, f"b{i}", "text")
    store.put(small, "s0", "text")
    store.put(sender, "n0", "text")
    store.put(sender, "n1", "text")  # one over: the biggest share gives its oldest
    assert store.get(big, "b0") is None
    assert store.get(big, "b1") is not None
    assert (store.get(small, "s0"), store.get(sender, "n1")) == ("text", "text")


def test_a_sender_holding_as_many_as_anyone_gives_its_own_oldest() -> None:
    store = SessionMessages(capacity=4, per_caller=100, ttl_s=60)
    other, sender = uuid4(), uuid4()
    for i in range(2):
        store.put(other, f"o{i}", "text")
        store.put(sender, f"m{i}", "text")
    store.put(sender, "m2", "text")
    assert store.get(sender, "m0") is None
    assert [store.get(other, f"o{i}") for i in range(2)] == ["text", "text"]


def test_a_caller_past_its_share_loses_its_own_oldest_message() -> None:
    store = SessionMessages(capacity=100, per_caller=2, ttl_s=60)
    caller = uuid4()
    for i in range(3):
        store.put(caller, f"m{i}", f"text {i}")
    assert store.get(caller, "m0") is None
    assert (store.get(caller, "m1"), store.get(caller, "m2")) == ("text 1", "text 2")


def test_expired_messages_make_room_before_any_live_one_goes() -> None:
    clock = Clock()
    store = SessionMessages(capacity=2, per_caller=100, ttl_s=60, clock=clock)
    old, live = uuid4(), uuid4()
    store.put(old, "a", "text")
    clock.now += 30
    store.put(live, "b", "text")
    clock.now += 31  # `a` has expired; `b` has not
    store.put(live, "c", "text")
    assert store.get(old, "a") is None
    assert (store.get(live, "b"), store.get(live, "c")) == ("text", "text")
