"""Where the server may connect on someone's behalf, to an address they gave it (a remote
workspace; later an OAuth client's metadata document): public addresses only, unless private
ones are allowed for an on-premises deployment (docs/SECURITY.md, "Remote workspaces").

The rules are applied to addresses, never to the spelling of a host: a name is resolved first,
and every address it resolves to must pass. Numeric spellings (`2130706433`, `0177.0.0.1`,
`0x7f.1`) are the resolver's to read, as the connection would read them; IPv6 addresses that
carry an IPv4 one (mapped, NAT64, 6to4) are judged by the IPv4 address they lead to.

Standard library only: the HTTP client that connects through these rules is `app.kit.outbound`.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address, ip_address, ip_network
from typing import Literal
from urllib.parse import urlsplit

IPAddress = IPv4Address | IPv6Address
# host, port -> the addresses it resolves to (as the resolver writes them).
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
Kind = Literal[
    "public", "private", "loopback", "link-local", "unspecified", "multicast", "reserved"
]

# A lookup that takes longer than this is refused: it holds a request (or an admin's save).
RESOLVE_TIMEOUT_S = 5.0
# What an on-premises deployment federates over: RFC 1918, the shared (carrier-grade NAT)
# range that overlay networks use, and IPv6 unique local addresses.
PRIVATE_NETWORKS = tuple(
    ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")
) + (ip_network("fc00::/7"),)
# Admitted with CORPUS_REMOTE_ALLOW_PRIVATE; the other kinds never are. Link-local holds the
# cloud metadata endpoints (169.254.169.254) that no federation needs.
PRIVATE_KINDS: frozenset[Kind] = frozenset({"private", "loopback"})
_NAT64 = ip_network("64:ff9b::/96")


class AddressRefused(Exception):
    """The server may not connect there; the message says why (an address, never a secret)."""

    def __init__(self, message: str, kind: Kind | None = None) -> None:
        super().__init__(message)
        self.kind = kind


def _carried_v4(ip: IPv6Address) -> IPv4Address | None:
    """The IPv4 address an IPv6 one leads to, if it carries one."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return IPv4Address(int(ip) & 0xFFFF_FFFF)
    return ip.sixtofour


def kind(ip: IPAddress) -> Kind:
    """What sort of address `ip` is, for the rules."""
    if isinstance(ip, IPv6Address):
        carried = _carried_v4(ip)
        if carried is not None:
            return kind(carried)
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if any(ip in network for network in PRIVATE_NETWORKS):
        return "private"
    # `is_global` alone admits reserved ranges (::/8) and IPv6 site-local on Python 3.11.
    site_local = isinstance(ip, IPv6Address) and ip.is_site_local
    if ip.is_global and not ip.is_reserved and not site_local:
        return "public"
    return "reserved"


async def system_resolve(host: str, port: int) -> Sequence[str]:
    """The system resolver's addresses for `host` (hosts file, DNS, numeric spellings)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def _literal(host: str) -> IPAddress | None:
    try:
        return ip_address(host.strip("[]"))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class AddressRules:
    """Public addresses only; `allow_private` admits private and loopback ones as well."""

    allow_private: bool = False
    resolve: Resolver = system_resolve
    timeout_s: float = RESOLVE_TIMEOUT_S

    def refusal(self, ip: IPAddress) -> AddressRefused | None:
        """Why the server may not connect to `ip`, or None when it may."""
        found = kind(ip)
        if found == "public" or (self.allow_private and found in PRIVATE_KINDS):
            return None
        return AddressRefused(f"{ip} is a {found} address", found)

    async def addresses(self, host: str, port: int) -> list[IPAddress]:
        """Every address `host` resolves to, each allowed: what to connect to.

        Raises:
            AddressRefused: it does not resolve (in time), or any of its addresses is refused
            (a name that also points inside the network is not trusted with the rest).
        """
        literal = _literal(host)
        if literal is not None:
            found = [literal]
        else:
            try:
                async with asyncio.timeout(self.timeout_s):
                    answers = await self.resolve(host, port)
            except TimeoutError:
                message = f"{host} did not resolve within {self.timeout_s:g} s"
                raise AddressRefused(message) from None
            except (OSError, UnicodeError):
                raise AddressRefused(f"{host} does not resolve") from None
            try:
                found = list(dict.fromkeys(ip_address(answer) for answer in answers))
            except ValueError:
                raise AddressRefused(f"{host} resolves to something not an address") from None
            if not found:
                raise AddressRefused(f"{host} does not resolve")
        for ip in found:
            refused = self.refusal(ip)
            if refused is not None:
                if literal is None:
                    message = f"{host} resolves to {ip}, a {refused.kind} address"
                    refused = AddressRefused(message, refused.kind)
                raise refused
        return found

    async def check_url(self, url: str) -> None:
        """Check an http(s) URL before it is kept: no credentials in it, and a host that
        resolves to allowed addresses now (the connection checks again: DNS changes).

        Raises:
            AddressRefused: why not.
        """
        try:
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise AddressRefused("not a URL with a valid host and port") from None
        if parts.scheme not in {"http", "https"}:
            raise AddressRefused("only http:// and https:// URLs")
        if "@" in parts.netloc:
            raise AddressRefused("it carries credentials (user:password@)")
        if not parts.hostname:
            raise AddressRefused("it names no host")
        await self.addresses(parts.hostname, port)
