"""Webhook targets judged on the normalised address (integrations.targets): every IPv4 spelling,
IPv6 forms that carry an IPv4 address, and the cloud metadata services refused even where private
targets are allowed. The expected addresses are worked out by hand in the comments."""

import socket

import pytest

from integrations import targets

LOOPBACK_SPELLINGS = [
    "https://2130706433/h",  # 127 * 2**24 + 1
    "https://0x7f000001/h",  # 0x7f = 127, then 0x000001
    "https://0X7F000001/h",
    "https://0177.0.0.1/h",  # octal 0177 = 127
    "https://0x7f.0.0.1/h",
    "https://127.1/h",  # two parts: 127, then 1 fills the last three bytes
    "https://127.0.1/h",  # three parts: 127, 0, then 1 fills two bytes
    "https://017700000001/h",  # octal of 2130706433
    "https://127.0.0.1./h",  # a trailing dot
    "https://[::ffff:127.0.0.1]/h",  # IPv4-mapped
    "https://[::ffff:7f00:1]/h",
    "https://[::127.0.0.1]/h",  # IPv4-compatible (deprecated)
    "https://[2002:7f00:1::]/h",  # 6to4 of 127.0.0.1 (2002:AABB:CCDD::)
    "https://[64:ff9b::7f00:1]/h",  # NAT64 of 127.0.0.1
    "https://[64:ff9b:1::a00:1]/h",  # local-use NAT64 prefix
    "https://[fe80::1]/h",  # IPv6 link-local
    "https://[fe80::1%25eth0]/h",  # with a zone
    "https://0/h",  # 0.0.0.0
]


@pytest.mark.parametrize("url", LOOPBACK_SPELLINGS)
def test_every_spelling_of_an_inside_address_is_refused(url, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    with pytest.raises(targets.TargetError):
        targets.check_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://169.254.169.254/latest/meta-data",
        "https://2852039166/latest",  # 169*2**24 + 254*2**16 + 169*2**8 + 254
        "https://0xa9fea9fe/latest",
        "https://169.254.43518/latest",  # 169.254, then 169*256 + 254 = 43518
        "https://[::ffff:169.254.169.254]/latest",
        "https://[2002:a9fe:a9fe::]/latest",  # 6to4 of 169.254.169.254
        "https://[64:ff9b::a9fe:a9fe]/latest",  # NAT64 of it
        "https://[fd00:ec2::254]/latest",  # AWS's IPv6 metadata endpoint
        "https://100.100.100.200/latest",  # Alibaba Cloud ECS metadata
        "https://169.254.0.1/x",  # the whole link-local /16
    ],
)
def test_metadata_is_refused_even_when_private_targets_are_allowed(url, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    with pytest.raises(targets.TargetError, match="metadata"):
        targets.check_url(url)


def test_private_targets_when_allowed_and_the_canonical_address(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    assert targets.check_url("https://10.1.2.3/h").host == "10.1.2.3"
    assert targets.check_url("https://2130706433/h").host == "127.0.0.1"
    # 93*2**24 + 184*2**16 + 215*2**8 + 14 = 1572394766
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    assert targets.check_url("https://1572394766/h").host == "93.184.215.14"
    assert targets.check_url("https://[2002:5db8:d70e::1]/h").host == "2002:5db8:d70e::1"  # 6to4 of it


@pytest.mark.parametrize(
    "url", ["https://1.2.3.4.5/h", "https://256.1.1.1/h", "https://4294967296/h", "https://09.1.1.1/h"]
)
def test_a_numeric_host_that_is_no_address_is_refused(url, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    with pytest.raises(targets.TargetError, match="not a valid IPv4"):
        targets.check_url(url)


def test_names_ending_in_letters_are_names(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
    assert targets.check_url("https://127.0.0.1.example.com/h").host == "127.0.0.1.example.com"


def test_a_name_resolving_to_metadata_is_refused_with_private_targets_allowed(monkeypatch, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True

    def fake(host, port, type=0):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", port))]

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    with pytest.raises(targets.TargetError, match="metadata"):
        targets.resolve(targets.check_url("https://metadata.example.com/h"))


def test_a_name_that_does_not_resolve_is_worth_retrying(monkeypatch, settings):
    def fail(host, port, type=0):
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", fail)
    with pytest.raises(targets.UnresolvedTargetError):
        targets.resolve(targets.check_url("https://quotes.example.com/h"))
