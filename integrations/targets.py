"""Where a webhook may be sent: the one rule, checked when the callback is given (the address as
written) and again before each delivery (every address its name resolves to), so a name that
later resolves to an inside address (DNS rebinding) is refused too; the delivery then connects to
the address checked here, not to a second look-up.

Refused unless settings.WEBHOOK_ALLOW_PRIVATE_TARGETS: loopback, private ranges, link-local,
shared (CGNAT), multicast, reserved and unspecified addresses, IPv6 included (and IPv4 mapped into
IPv6). Plain http only with settings.WEBHOOK_ALLOW_HTTP; no credentials in the URL."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from .models import MAX_URL_CHARS

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class TargetError(ValueError):
    """Why a URL cannot receive notifications (a sentence for the API's error message)."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # a name or an address, without brackets
    port: int
    path: str  # path and query, at least "/"
    host_header: str


def is_public(ip: IPAddress) -> bool:
    mapped = getattr(ip, "ipv4_mapped", None)
    if mapped is not None:
        return is_public(mapped)
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified)


def _private_allowed() -> bool:
    return bool(settings.WEBHOOK_ALLOW_PRIVATE_TARGETS)


def check_url(url: object) -> Target:
    """The URL as written: raises TargetError unless it may receive notifications."""
    if not isinstance(url, str) or not url:
        raise TargetError("must be an http(s) URL")
    if len(url) > MAX_URL_CHARS:
        raise TargetError(f"must be at most {MAX_URL_CHARS} characters")
    if any(ord(c) < 33 or ord(c) > 126 for c in url):
        raise TargetError("must be an ASCII URL without spaces (encode other characters)")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise TargetError("is not a valid URL") from None
    allowed = ("https", "http") if settings.WEBHOOK_ALLOW_HTTP else ("https",)
    if parts.scheme not in allowed:
        raise TargetError("must start with https://" if len(allowed) == 1 else "must be an http(s) URL")
    if parts.username is not None or parts.password is not None:
        raise TargetError("must not carry credentials; verify our signature instead")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise TargetError("has no host")
    if parts.fragment:
        raise TargetError("must not have a #fragment")
    if not _private_allowed():
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            if host == "localhost" or host.endswith(".localhost"):
                raise TargetError("must not point to this machine") from None
        else:
            if not is_public(ip):
                raise TargetError("must not point to a loopback, private, link-local or reserved address")
    default_port = 443 if parts.scheme == "https" else 80
    return Target(
        scheme=parts.scheme,
        host=host,
        port=port or default_port,
        path=(parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
        host_header=parts.netloc.rpartition("@")[2],
    )


def resolve(target: Target) -> str:
    """The address to connect to: the first one the host resolves to, after checking all of them.
    Raises TargetError when the name does not resolve or any address is not allowed."""
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise TargetError(f"the host {target.host} does not resolve ({exc})") from None
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise TargetError(f"the host {target.host} does not resolve")
    if not _private_allowed():
        for address in addresses:
            if not is_public(ipaddress.ip_address(address.partition("%")[0])):
                raise TargetError(
                    f"the host {target.host} resolves to {address}, a loopback, private, link-local or "
                    "reserved address"
                )
    return addresses[0]
