"""The address rules of outgoing connections (`app.kit.addresses`): what each address is, in
every spelling, what `allow_private` admits, and that a name is judged by every address it
resolves to; and the client built on them (`app.kit.outbound`) refusing a name at connect
time, and connecting to the checked address while TLS still verifies the name, over real TCP
on 127.0.0.1."""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from ipaddress import ip_address
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from app.kit import outbound
from app.kit.addresses import AddressRefused, AddressRules, Kind, kind, system_resolve
from tests.support import listening_socket, serving
from tests.tls import certificates, serving_tls

KINDS: list[tuple[str, Kind]] = [
    ("93.184.215.14", "public"),
    ("2606:4700::1111", "public"),
    ("127.0.0.1", "loopback"),
    ("127.255.0.9", "loopback"),
    ("::1", "loopback"),
    ("::ffff:127.0.0.1", "loopback"),
    ("2002:7f00:1::", "loopback"),
    ("10.1.2.3", "private"),
    ("172.31.255.1", "private"),
    ("192.168.0.1", "private"),
    ("100.64.0.1", "private"),
    ("fd12:3456::1", "private"),
    ("64:ff9b::a00:1", "private"),
    ("169.254.169.254", "link-local"),
    ("::ffff:169.254.169.254", "link-local"),
    ("fe80::1", "link-local"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("224.0.0.1", "multicast"),
    ("ff02::1", "multicast"),
    ("0.1.2.3", "reserved"),
    ("192.0.2.1", "reserved"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("::7f00:1", "reserved"),
    ("fec0::1", "reserved"),
    ("2001:db8::1", "reserved"),
]


@pytest.mark.parametrize(("address", "expected"), KINDS)
def test_each_address_is_judged_by_what_it_is_and_leads_to(address: str, expected: Kind) -> None:
    assert kind(ip_address(address)) == expected


@pytest.mark.parametrize(("address", "found"), KINDS)
def test_only_public_addresses_pass_and_allowing_private_adds_private_and_loopback_only(
    address: str, found: Kind
) -> None:
    ip = ip_address(address)
    assert (AddressRules().refusal(ip) is None) == (found == "public")
    admitted = found in {"public", "private", "loopback"}
    assert (AddressRules(allow_private=True).refusal(ip) is None) == admitted


@pytest.mark.parametrize(
    "url",
    [
        "http://2130706433/",
        "http://0177.0.0.1/",
        "http://0x7f.1/",
        "http://127.1/",
        "http://[::ffff:7f00:1]:8000/",
        "http://localhost:8000/",
    ],
)
async def test_every_spelling_of_loopback_is_read_by_the_resolver_and_refused(url: str) -> None:
    with pytest.raises(AddressRefused) as refused:
        await AddressRules().check_url(url)
    assert refused.value.kind == "loopback"
    await AddressRules(allow_private=True).check_url(url)


@pytest.mark.parametrize(
    "url", ["https://user:pw@93.184.215.14/", "ftp://93.184.215.14/", "http://:80/"]
)
async def test_a_url_with_credentials_another_scheme_or_no_host_is_refused(url: str) -> None:
    with pytest.raises(AddressRefused):
        await AddressRules(allow_private=True).check_url(url)


async def test_a_name_is_refused_when_any_address_it_resolves_to_is() -> None:
    async def resolve(host: str, port: int) -> Sequence[str]:
        return ["93.184.215.14", "10.0.0.7"]

    with pytest.raises(AddressRefused) as refused:
        await AddressRules(resolve=resolve).addresses("partner.test", 443)
    assert refused.value.kind == "private"


async def test_a_name_that_does_not_resolve_is_refused() -> None:
    async def resolve(host: str, port: int) -> Sequence[str]:
        raise OSError("no such name")

    with pytest.raises(AddressRefused):
        await AddressRules(resolve=resolve).addresses("partner.test", 443)


async def test_the_client_judges_the_address_it_connects_to_and_keeps_the_name() -> None:
    async def host(request: Request) -> PlainTextResponse:
        return PlainTextResponse(request.headers["host"])

    answers = {"partner.test": ["127.0.0.1"]}

    async def resolve(host: str, port: int) -> Sequence[str]:
        return answers.get(host) or await system_resolve(host, port)

    sock, url = listening_socket()
    port = url.rsplit(":", 1)[1]
    async with serving(Starlette(routes=[Route("/", host)]), sock, lifespan="off"):
        async with outbound.client(AddressRules(allow_private=True, resolve=resolve)) as http:
            reply = await http.get(f"http://partner.test:{port}/")
        # Connected to the address the name resolved to, and asked for the name.
        assert reply.text == f"partner.test:{port}"
        async with outbound.client(AddressRules(resolve=resolve)) as http:
            with pytest.raises(AddressRefused):
                await http.get(f"http://partner.test:{port}/")


async def test_tls_verifies_the_name_while_the_connection_goes_to_the_checked_address(
    tmp_path: Path,
) -> None:
    async def host(request: Request) -> PlainTextResponse:
        return PlainTextResponse(request.headers["host"])

    ca, cert, key = certificates(tmp_path, "partner.test")
    trusted = ssl.create_default_context(cafile=str(ca))

    async def resolve(host: str, port: int) -> Sequence[str]:
        return ["127.0.0.1"] if host == "partner.test" else await system_resolve(host, port)

    rules = AddressRules(allow_private=True, resolve=resolve)
    async with (
        serving_tls(Starlette(routes=[Route("/", host)]), cert, key) as port,
        outbound.client(rules, verify=trusted) as http,
    ):
        reply = await http.get(f"https://partner.test:{port}/")
        assert reply.text == f"partner.test:{port}"
        # The same server by its address: the certificate does not name it.
        with pytest.raises(httpx.ConnectError) as refused:
            await http.get(f"https://127.0.0.1:{port}/")
    causes: list[BaseException] = []
    cause: BaseException | None = refused.value
    while cause is not None:
        causes.append(cause)
        cause = cause.__context__
    assert any(isinstance(c, ssl.SSLCertVerificationError) for c in causes)
