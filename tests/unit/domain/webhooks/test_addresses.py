"""Which addresses a webhook may never reach: anything that is not a public unicast host."""

from __future__ import annotations

import pytest

from groundwork.domain.webhooks import is_private_address


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "169.254.169.254",  # link-local: cloud metadata
        "100.64.0.1",  # CGNAT
        "100.127.255.254",
        "0.0.0.0",  # unspecified
        "0.1.2.3",  # "this network"
        "224.0.0.1",  # multicast
        "239.255.255.250",
        "240.0.0.1",  # reserved
        "255.255.255.255",
        "198.18.0.1",  # benchmarking
        "::1",
        "::",
        "fe80::1%eth0",
        "fd00::1",  # unique local
        "fec0::1",  # site-local
        "ff0e::1",  # global-scope multicast is still multicast
        "::ffff:127.0.0.1",  # IPv4-mapped loopback
        "::ffff:10.1.2.3",
        "::127.0.0.1",  # IPv4-compatible (deprecated): always refused
        "::8.8.8.8",
        "2002:7f00:1::1",  # 6to4 wrapping 127.0.0.1
        "2002:a9fe:a9fe::1",  # 6to4 wrapping 169.254.169.254
        "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo whose client is 127.0.0.1
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 of the metadata address
        "64:ff9b:1::808:808",  # local-use NAT64: one network's translator
    ],
)
def test_non_public_addresses_are_refused(address: str) -> None:
    assert is_private_address(address)


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "93.184.215.14",
        "2606:4700::1111",
        "2001:4860:4860::8888",
        "::ffff:8.8.8.8",  # IPv4-mapped public
        "2002:0808:0808::1",  # 6to4 wrapping a public address
        "64:ff9b::808:808",  # NAT64 of a public address
    ],
)
def test_public_addresses_are_allowed(address: str) -> None:
    assert not is_private_address(address)
