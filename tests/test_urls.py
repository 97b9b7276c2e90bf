"""URLs named in messages and logs without their secrets (gateway.urls): the cases a
review found shown whole or mangled (access tokens, signatures, `;` separators, unix
socket URLs), beside those shown right before."""

from __future__ import annotations

import pytest

from gateway.urls import shown_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:REDISPASS@127.0.0.1:6379/10", "redis://:***@127.0.0.1:6379/10"),
        ("redis://user:pa@ss@host/0", "redis://user:***@host/0"),
        ("https://token@h/v1", "https://***@h/v1"),
        (
            "redis-cluster://a:b@h1:1,h2:2?password=zz",
            "redis-cluster://a:***@h1:1,h2:2?password=***",
        ),
        (
            "unix:///var/run/redis.sock?password=x&db=2",
            "unix:///var/run/redis.sock?password=***&db=2",
        ),
        ("redis://h/0?passwd=x;db=1", "redis://h/0?passwd=***;db=1"),
        ("https://h/v1?access_token=abc&x=1", "https://h/v1?access_token=***&x=1"),
        ("https://h/v1?api-key=abc", "https://h/v1?api-key=***"),
        ("https://h/v1?sig=abc&sslpassword=q", "https://h/v1?sig=***&sslpassword=***"),
        ("sqlite:///gw.db", "sqlite:///gw.db"),
        ("sqlite:////var/lib/gw.db", "sqlite:////var/lib/gw.db"),
        ("http://[::1]:8080/v1", "http://[::1]:8080/v1"),
        ("http://[::1", "(a URL that does not parse)"),
    ],
)
def test_a_url_is_shown_without_its_secrets(url: str, shown: str) -> None:
    assert shown_url(url) == shown
