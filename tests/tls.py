"""Servers with certificates of their own: a certificate authority made for the test, and
uvicorn serving TLS with a certificate it signed, on 127.0.0.1 (outgoing connections that must
verify a name: remote workspaces, OAuth clients' metadata documents)."""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import uvicorn
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from starlette.types import ASGIApp

from tests.support import eventually, listening_socket


def certificates(folder: Path, name: str) -> tuple[Path, Path, Path]:
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
async def serving_tls(app: ASGIApp, cert: Path, key: Path) -> AsyncIterator[int]:
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
