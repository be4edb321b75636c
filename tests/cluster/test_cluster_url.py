"""The redis+cluster:// URL form (docs/cluster.md) and how commands are routed by key."""

from __future__ import annotations

import pytest

from kit.redis.cluster import ClusterAddress, first_key, is_cluster_url, node_urls


def test_url_forms() -> None:
    address = ClusterAddress.parse("redis+cluster://127.0.0.1:7000,127.0.0.1:7001/")
    assert address.nodes == (("127.0.0.1", 7000), ("127.0.0.1", 7001))
    assert not address.tls and address.password == ""
    assert address.node_url("127.0.0.1:7001") == "redis://127.0.0.1:7001/0"
    secure = ClusterAddress.parse("rediss+cluster://app:p%40ss@redis-a:6379,redis-b:6380/0")
    assert secure.tls and secure.username == "app" and secure.password == "p@ss"
    assert secure.node_url("redis-b:6380") == "rediss://app:p%40ss@redis-b:6380/0"
    assert ClusterAddress.parse("redis+cluster://[::1]:7000/").nodes == (("::1", 7000),)
    assert is_cluster_url("REDIS+CLUSTER://h:1/") and not is_cluster_url("redis://h:1/0")
    assert node_urls("redis://h:1/0") == ["redis://h:1/0"]
    assert node_urls("redis+cluster://a:1,b:2/") == ["redis://a:1/0", "redis://b:2/0"]


@pytest.mark.parametrize(
    "url", ["redis://h:1/0", "redis+cluster://", "redis+cluster://h/", "redis+cluster://h:x/", "redis+cluster://:1/"]
)
def test_bad_urls_are_refused(url: str) -> None:
    with pytest.raises(ValueError):
        ClusterAddress.parse(url)


def test_first_key_routing() -> None:
    assert first_key(("EVALSHA", "abc", 2, "k1", "k2", "x")) == b"k1"
    assert first_key(("evalsha", "abc", 1, b"k1")) == b"k1"
    assert first_key(("EVAL", "return 1", 0)) is None
    assert first_key(("XREAD", "COUNT", 5, "STREAMS", "s1", "0")) == b"s1"
    assert first_key(("HMGET", "h", "a")) == b"h"
    assert first_key(("PING",)) is None
    assert first_key(("SCRIPT", "LOAD", "return 1")) is None
    assert first_key(("PUBLISH", "channel", "x")) is None
