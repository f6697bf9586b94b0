"""The SSRF guard of ``web_fetch``: which addresses a fetch may connect to.

A URL names a host; the host's *addresses* decide whether it is private. So the guard resolves
the name itself, refuses when any address is loopback, private, link-local, multicast, reserved
or unspecified (``localhost``, ``10.0.0.1``, ``169.254.169.254`` — the cloud metadata service —
``[::1]``, ``fd00::1`` …), and hands back the addresses to connect to. The fetcher connects to those
very addresses (the name goes in ``Host`` and TLS SNI), so a second DNS answer cannot swap in a
private address between the check and the connection (DNS rebinding). It runs on every hop of a
redirect chain: a public page redirecting to ``http://127.0.0.1`` is refused like the direct URL.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass

__all__ = ["BlockedAddressError", "ResolvedHost", "is_public_address", "resolve_checked"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class BlockedAddressError(Exception):
    """The host resolves to an address the settings do not allow (the message says which)."""


@dataclass(frozen=True)
class ResolvedHost:
    """A host name checked by the guard and its addresses, in the order to try them."""

    host: str
    addresses: tuple[IPAddress, ...]


def is_public_address(address: IPAddress) -> bool:
    """Whether ``address`` is on the public internet (not private, loopback, link-local …)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return is_public_address(address.ipv4_mapped)
    return not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or not address.is_global
    )


def _host_allowed(host: str, allow_hosts: frozenset[str]) -> bool:
    """Whether ``host`` is named in the allow-list (exactly, or as ``.suffix``)."""
    host = host.lower().rstrip(".")
    for allowed in allow_hosts:
        entry = allowed.lower().rstrip(".")
        if host == entry or (entry.startswith(".") and host.endswith(entry)):
            return True
    return False


def _address_allowed(address: IPAddress, allow_hosts: frozenset[str]) -> bool:
    """Whether ``address`` is inside an address or network of the allow-list."""
    for entry in allow_hosts:
        try:
            network = ipaddress.ip_network(entry, strict=False)
        except ValueError:
            continue
        if address.version == network.version and address in network:
            return True
    return False


def _literal(host: str) -> IPAddress | None:
    """``host`` as an address when it is one (``127.0.0.1``, ``::1``)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


async def _addresses(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to, in the resolver's order."""
    literal = _literal(host)
    if literal is not None:
        return [literal]
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise BlockedAddressError(f"cannot resolve host {host!r}: {error}") from error
    addresses: list[IPAddress] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise BlockedAddressError(f"host {host!r} has no addresses")
    return addresses


async def resolve_checked(
    host: str,
    port: int,
    *,
    allow_private: bool = False,
    allow_hosts: frozenset[str] = frozenset(),
) -> ResolvedHost:
    """Resolve ``host`` and check every address it has.

    :param allow_private: allow every address (the guard is off)
    :param allow_hosts: host names (``.example.com`` for a domain and its subdomains), addresses
        or networks (``10.0.0.0/8``) that may be private
    :raises BlockedAddressError: an address is not public and not allowed, or the name does not
        resolve
    """
    literal = host.strip("[]")
    addresses = await _addresses(literal, port)
    if allow_private or _host_allowed(literal, allow_hosts):
        return ResolvedHost(literal, tuple(addresses))
    for address in addresses:
        if not is_public_address(address) and not _address_allowed(address, allow_hosts):
            raise BlockedAddressError(
                f"refused to fetch {host!r}: it resolves to {address}, a private, loopback or "
                "link-local address (allow it with allowPrivate or allowHosts in tools.json)"
            )
    return ResolvedHost(literal, tuple(addresses))
