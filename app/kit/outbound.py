"""The HTTP client for requests the server makes to an address someone gave it (a remote
workspace; later an OAuth client's metadata document): it connects only where the address rules
(`app.kit.addresses`) allow, judged on the very addresses it connects to.

Why a network backend: the check must hold at connect time, because a name checked when it was
saved can resolve elsewhere later (DNS rebinding), and it must not be a second lookup beside the
client's own (the client would connect wherever its own lookup said). So httpcore's network
backend, the one place a TCP connection is opened, resolves the name itself, checks every
address, and connects to a checked address. Everything above the socket stays the client's:
the pool is keyed by the URL's host, TLS verifies the certificate and sends SNI for that host,
and the Host header is the URL's. (Rewriting the URL to the address instead, with the
`sni_hostname` extension, would key the pool by address and share a TLS connection between
names.) httpx 0.29 takes no network backend (encode/httpx#3749 would add one), so the transport
swaps its pool for one built with ours.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable

import anyio
import httpcore
import httpx

from app.kit.addresses import AddressRefused, AddressRules


class _CheckedBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, rules: AddressRules) -> None:
        self._rules = rules
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """A connection to an allowed address of `host`, tried in the resolver's order.

        Raises:
            AddressRefused: the rules refuse the host (not retried: it is no network error).
            httpcore.ConnectError, httpcore.ConnectTimeout: no allowed address answered.
        """
        try:
            # One timeout for the lookup and the connections together, as for httpcore's own.
            with anyio.fail_after(timeout):
                last: httpcore.ConnectError | None = None
                for address in await self._rules.addresses(host, port):
                    try:
                        return await self._inner.connect_tcp(
                            str(address),
                            port,
                            local_address=local_address,
                            socket_options=socket_options,
                        )
                    except httpcore.ConnectError as exc:
                        last = exc
                assert last is not None  # addresses() returns at least one
                raise last
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"connecting to {host} timed out") from exc

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AddressRefused("a Unix socket is no network address")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class CheckedTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport, its connections opened through the address rules; `verify` is
    the TLS context (the system's certificate authorities unless given: tests give theirs)."""

    def __init__(self, rules: AddressRules, verify: ssl.SSLContext | None = None) -> None:
        # No proxy from the environment: it would decide where the connection goes.
        super().__init__(trust_env=False)
        # Fail closed if httpx stops keeping its pool here: requests would bypass the rules.
        if not isinstance(getattr(self, "_pool", None), httpcore.AsyncConnectionPool):
            raise RuntimeError("httpx's transport changed: the address rules cannot apply")
        limits = httpx.Limits()
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=verify or httpx.create_ssl_context(trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_CheckedBackend(rules),
        )


def client(rules: AddressRules, *, verify: ssl.SSLContext | None = None) -> httpx.AsyncClient:
    """A client that follows no redirect (each would be a new address to judge) and reads no
    proxy from the environment. A request to a refused host raises `AddressRefused` (not an
    `httpx.TransportError`: retrying it cannot help)."""
    return httpx.AsyncClient(
        transport=CheckedTransport(rules, verify), follow_redirects=False, trust_env=False
    )
