"""Where a webhook may be sent: the one rule, checked when the callback is given (the address as
written) and again before each delivery (every address its name resolves to), so a name that
later resolves to an inside address (DNS rebinding) is refused too; the delivery then connects to
the address checked here, not to a second look-up.

The host is judged in its normalised form: every spelling of an IPv4 address a resolver or a
browser accepts (decimal 2130706433, hex 0x7f000001, octal 0177.0.0.1, short 127.1; WHATWG URL
"IPv4 parser") is read as that address, and an IPv6 address is judged together with every IPv4
address it carries (IPv4-mapped and -compatible, 6to4 2002::/16, NAT64 64:ff9b::/96, Teredo).

Refused unless settings.WEBHOOK_ALLOW_PRIVATE_TARGETS: loopback, private ranges, link-local,
shared (CGNAT), multicast, reserved and unspecified addresses, local-use NAT64 (64:ff9b:1::/48).
Refused always, private targets allowed or not: the cloud metadata services (METADATA), which
hand out credentials. Plain http only with settings.WEBHOOK_ALLOW_HTTP; no credentials in the URL.
A name that fails to resolve is UnresolvedTargetError (a DNS hiccup: the delivery retries), every other
refusal final."""

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


class UnresolvedTargetError(TargetError):
    """The name did not resolve now: worth another attempt later, unlike other refusals."""


# Cloud instance metadata services, refused even where private targets are allowed: 169.254.0.0/16
# (AWS, GCP, Azure, Oracle, OpenStack: 169.254.169.254; RFC 3927 link-local as a whole), AWS's IPv6
# endpoint fd00:ec2::254 (AWS EC2 User Guide, "Instance metadata service endpoints", 2024) and
# Alibaba Cloud ECS's 100.100.100.200 (Alibaba Cloud ECS docs, "Instance metadata", 2024).
METADATA = (
    ipaddress.ip_network("169.254.0.0/16"),
    ipaddress.ip_network("fd00:ec2::254/128"),
    ipaddress.ip_network("100.100.100.200/32"),
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052 well-known prefix: the last 32 bits are IPv4
NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215 local-use: translates to anything
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # RFC 4291 (deprecated) ::a.b.c.d


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # a name or an address, without brackets
    port: int
    path: str  # path and query, at least "/"
    host_header: str


def _ipv4_number(text: str) -> int | None:
    """One part of an IPv4 spelling (WHATWG URL "IPv4 number parser"): 0x hex, 0-led octal,
    decimal; None when it is not a number of those forms."""
    base, digits = 10, text
    if text[:2].lower() == "0x":
        base, digits = 16, text[2:]
    elif len(text) > 1 and text[0] == "0":
        base, digits = 8, text[1:]
    if digits == "":
        return 0 if base == 16 else None
    try:
        return int(digits, base) if digits.isalnum() else None
    except ValueError:
        return None


def parse_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a host spells, in any of the forms resolvers and browsers accept (WHATWG URL
    "IPv4 parser", as inet_aton: 1 to 4 parts, the last filling the remaining bytes): None when the
    host is not numeric. Raises TargetError for a numeric host that is no address (1.2.3.4.5)."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    last = parts[-1]
    if not (last.isdigit() or (last[:2].lower() == "0x" and _ipv4_number(last) is not None)):
        return None  # the last label is not a number: a name (WHATWG "ends in a number" check)
    numbers = [_ipv4_number(part) for part in parts]
    if len(parts) > 4 or any(n is None for n in numbers):
        raise TargetError("has a numeric host that is not a valid IPv4 address")
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        raise TargetError("has a numeric host that is not a valid IPv4 address")
    number = values[-1]
    for i, n in enumerate(values[:-1]):
        number += n << (8 * (3 - i))
    return ipaddress.IPv4Address(number)


def parse_host(host: str) -> IPAddress | None:
    """The address a URL's host names literally (normalised), or None for a DNS name."""
    if "%" in host:  # an IPv6 zone (fe80::1%eth0): only meaningful on this machine
        raise TargetError("must not carry an IPv6 zone")
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host)
        except ValueError:
            raise TargetError("has an invalid IPv6 address") from None
    return parse_ipv4(host)


def carried(ip: IPAddress) -> list[IPAddress]:
    """The address and every IPv4 address it carries (mapped, compatible, 6to4, NAT64, Teredo),
    each of which a router or translator may deliver to."""
    out: list[IPAddress] = [ip]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            out.append(ip.ipv4_mapped)
        if ip.sixtofour is not None:
            out.append(ip.sixtofour)
        if ip.teredo is not None:
            out.extend(ip.teredo)
        if ip in NAT64 or (ip in IPV4_COMPATIBLE and int(ip) > 1):
            out.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return out


def is_metadata(ip: IPAddress) -> bool:
    return any(a in net for a in carried(ip) for net in METADATA if a.version == net.version)


def _public_alone(ip: IPAddress) -> bool:
    if ip.version == 6 and ip in NAT64_LOCAL:
        return False
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified)


def is_public(ip: IPAddress) -> bool:
    """A public address, and every IPv4 address it carries public too."""
    return all(_public_alone(a) for a in carried(ip))


def check_address(ip: IPAddress, named: str = "") -> None:
    """The one rule for an address (written in the URL, or what its name resolves to)."""
    where = f"the host {named} resolves to {ip}, " if named else "must not point to "
    if is_metadata(ip):
        raise TargetError(where + "a cloud metadata address")
    if not _private_allowed() and not is_public(ip):
        raise TargetError(where + "a loopback, private, link-local or reserved address")


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
    ip = parse_host(host.lower())
    if ip is not None:
        check_address(ip)
        host = str(ip)  # connect to the address it spells, in its one canonical form
    elif not _private_allowed() and (host.lower() == "localhost" or host.lower().endswith(".localhost")):
        raise TargetError("must not point to this machine")
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
    Raises UnresolvedTargetError when the name does not resolve (now), TargetError when any address is
    not allowed."""
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except UnicodeError as exc:
        raise TargetError(f"the host {target.host} is not a valid name ({exc})") from None
    except OSError as exc:
        raise UnresolvedTargetError(f"the host {target.host} does not resolve ({exc})") from None
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise UnresolvedTargetError(f"the host {target.host} does not resolve")
    for address in addresses:
        check_address(ipaddress.ip_address(address.partition("%")[0]), named=target.host)
    return addresses[0]
