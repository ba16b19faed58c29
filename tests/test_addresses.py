"""The address rules of outgoing connections (`app.kit.addresses`): what each address is, in
every spelling, what `allow_private` admits, and that a name is judged by every address it
resolves to; and the client built on them (`app.kit.outbound`) refusing a name at connect
time, and connecting to the checked address while TLS still verifies the name, over real TCP
on 127.0.0.1."""

from __future__ import annotations

import asyncio
import datetime
import ssl
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from ipaddress import ip_address
from pathlib import Path

import httpx
import pytest
import uvicorn
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from app.kit import outbound
from app.kit.addresses import AddressRefused, AddressRules, Kind, kind, system_resolve
from tests.support import eventually, listening_socket, serving

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


def _certificates(folder: Path, name: str) -> tuple[Path, Path, Path]:
    """A certificate authority, and a certificate it signed for `name` with its key."""
    now = datetime.datetime.now(datetime.UTC)

    def signed(
        subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name
    ) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(issuer)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test CA")])
    ca = (
        signed("Test CA", ca_key, ca_name)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        signed(name, key, ca_name)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = folder / "ca.pem", folder / "leaf.pem", folder / "leaf.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@asynccontextmanager
async def _serving_tls(app: Starlette, cert: Path, key: Path) -> AsyncIterator[int]:
    sock, url = listening_socket()
    config = uvicorn.Config(
        app,
        lifespan="off",
        ws="none",
        log_config=None,
        access_log=False,
        ssl_certfile=str(cert),
        ssl_keyfile=str(key),
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))

    async def started_or_ended() -> bool:
        return server.started or task.done()

    try:
        await eventually(started_or_ended, "the TLS server starts")
        yield int(url.rsplit(":", 1)[1])
    finally:
        server.should_exit = True
        await task


async def test_tls_verifies_the_name_while_the_connection_goes_to_the_checked_address(
    tmp_path: Path,
) -> None:
    async def host(request: Request) -> PlainTextResponse:
        return PlainTextResponse(request.headers["host"])

    ca, cert, key = _certificates(tmp_path, "partner.test")
    trusted = ssl.create_default_context(cafile=str(ca))

    async def resolve(host: str, port: int) -> Sequence[str]:
        return ["127.0.0.1"] if host == "partner.test" else await system_resolve(host, port)

    rules = AddressRules(allow_private=True, resolve=resolve)
    async with (
        _serving_tls(Starlette(routes=[Route("/", host)]), cert, key) as port,
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
