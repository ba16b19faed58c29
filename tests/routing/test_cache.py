"""The search cache: hits and misses, TTL expiry, LRU capacity, invalidation by workspace, and
a search that began before a change not storing what it found."""

from __future__ import annotations

from app.routing.cache import SearchCache


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_repeated_lookup_hits_and_the_figures_count_it() -> None:
    cache: SearchCache[str] = SearchCache(10, 600)
    assert cache.get("k") is None
    assert cache.put("k", "v", ["w"], cache.generations(["w"]))
    assert cache.get("k") == "v"
    stats = cache.stats()
    assert (stats.size, stats.hits, stats.misses, stats.hit_rate) == (1, 1, 1, 0.5)
    assert (stats.capacity, stats.ttl_seconds) == (10, 600)


def test_an_entry_expires_after_its_ttl() -> None:
    clock = Clock()
    cache: SearchCache[str] = SearchCache(10, 60, clock=clock)
    cache.put("k", "v", ["w"], cache.generations(["w"]))
    clock.now += 59.9
    assert cache.get("k") == "v"
    clock.now += 0.2
    assert cache.get("k") is None
    assert cache.stats().size == 0


def test_the_least_recently_used_entry_goes_first_when_full() -> None:
    cache: SearchCache[str] = SearchCache(2, 600)
    for key in ("a", "b"):
        cache.put(key, key, ["w"], cache.generations(["w"]))
    assert cache.get("a") == "a"  # b is now the least recently used
    cache.put("c", "c", ["w"], cache.generations(["w"]))
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == ("a", None, "c")


def test_a_change_to_a_workspace_drops_only_the_entries_covering_it() -> None:
    cache: SearchCache[str] = SearchCache(10, 600)
    cache.put("both", "1", ["w1", "w2"], cache.generations(["w1", "w2"]))
    cache.put("other", "2", ["w3"], cache.generations(["w3"]))
    assert cache.invalidate("w2") == 1
    assert (cache.get("both"), cache.get("other")) == (None, "2")


def test_a_search_that_began_before_a_change_does_not_store_its_results() -> None:
    cache: SearchCache[str] = SearchCache(10, 600)
    before = cache.generations(["w1", "w2"])
    cache.invalidate("w2")  # a write committed while the search ran
    assert cache.put("k", "stale", ["w1", "w2"], before) is False
    before = cache.generations(["w1"])
    cache.clear()  # the notifications were lost for a while
    assert cache.put("k", "stale", ["w1"], before) is False
    assert cache.get("k") is None


def test_a_cache_of_no_capacity_or_no_ttl_stores_nothing() -> None:
    for cache in (SearchCache[str](0, 600), SearchCache[str](10, 0)):
        assert cache.put("k", "v", ["w"], cache.generations(["w"])) is False
        assert cache.get("k") is None
