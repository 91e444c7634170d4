"""Whose call it is: the client's address behind trusted proxies, and the key charged."""

from __future__ import annotations

import argparse

import pytest

from services.config import Quotas, Rate, quotas, rate_limits, trusted_proxies
from services.grpc_api import peer_address
from services.usecases.context import Caller
from services.usecases.quotas import address_key, client_address, client_key

PROXIES = trusted_proxies("10.0.0.0/8, 2001:db8::/32")


def test_an_untrusted_peer_is_the_client_whatever_it_forwards() -> None:
    assert client_address("198.51.100.9", ["1.2.3.4"], PROXIES) == "198.51.100.9"
    assert client_address("198.51.100.9", [], ()) == "198.51.100.9"


def test_behind_trusted_proxies_the_rightmost_untrusted_hop_is_the_client() -> None:
    # the client sent a made-up hop; our ingress (10.1.1.1) appended the real address
    assert client_address("10.1.1.1", ["6.6.6.6, 203.0.113.5"], PROXIES) == "203.0.113.5"
    # two proxies of ours in a row: both skipped; the headers' values in order
    assert client_address("10.0.0.2", ["6.6.6.6", "203.0.113.5, 10.0.0.1"], PROXIES) == (
        "203.0.113.5"
    )
    # a proxy that forwards nothing: the proxy itself is the client (its own calls)
    assert client_address("10.0.0.2", [], PROXIES) == "10.0.0.2"
    # every hop trusted: the leftmost
    assert client_address("10.0.0.2", ["10.9.9.9, 10.0.0.1"], PROXIES) == "10.9.9.9"
    # garbage in the header is no address: it stops the walk there (as its own key)
    assert client_address("10.0.0.2", ["nonsense"], PROXIES) == "nonsense"
    assert client_address("2001:db8::1", ["2001:db9::7"], PROXIES) == "2001:db9::7"


def test_grpc_peers_and_the_keys_charged() -> None:
    assert peer_address("ipv4:127.0.0.1:5555") == "127.0.0.1"
    assert peer_address("ipv6:[::1]:5555") == "::1"
    assert peer_address("ipv6:%5B::1%5D:5555") == "::1"
    assert peer_address("unix:/tmp/s") == "unix:/tmp/s"
    # a token's key never holds the token; an IPv6 client is its /64
    key = client_key(Caller(token="secret-seat-token", address="1.2.3.4"))
    assert key.startswith("t:") and "secret" not in key
    assert client_key(Caller(address="1.2.3.4")) == "a:1.2.3.4"
    one = address_key(Caller(address="2001:db9:1:2:aaaa::1"))
    assert one == address_key(Caller(address="2001:db9:1:2:bbbb::9")) == "a:2001:db9:1:2::"
    assert address_key(Caller(address="::ffff:1.2.3.4")) == "a:1.2.3.4"


def test_the_limit_and_quota_flags() -> None:
    assert rate_limits("create=2/5, read=100/400") == {
        "create": Rate(2.0, 5),
        "read": Rate(100.0, 400),
    }
    assert rate_limits("off") is None
    assert rate_limits("") == {}
    assert quotas("open_games=3,games_in_play=0") == Quotas(open_games=3, games_in_play=0)
    assert quotas("off") == Quotas(0, 0, 0, 0, 0)
    for bad in ("nope=1/2", "create=x/2", "create=-1/2"):
        with pytest.raises(argparse.ArgumentTypeError):
            rate_limits(bad)
    with pytest.raises(argparse.ArgumentTypeError):
        quotas("open_games=lots")
    with pytest.raises(argparse.ArgumentTypeError):
        trusted_proxies("10.0.0.0/99")
