"""A real SMTP server (aiosmtpd) on a real socket that keeps every message it takes:
plain, STARTTLS or implicit TLS, with or without a login, with a self-signed
certificate made for the test by the openssl tool.

Recipients are scripted by their local part: `refuse@…` is answered 550 and
`later@…` 451, every other address is taken."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

USER, PASSWORD = "alerts", "s3cret-password"


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    message: EmailMessage


@dataclass
class Mailbox:
    port: int
    messages: list[Received] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)


class _Handler:
    def __init__(self, mailbox: Mailbox) -> None:
        self.mailbox = mailbox

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any,  # noqa: N802
                          address: str, options: list[str]) -> str:
        local = address.partition("@")[0]
        if local == "refuse":
            return "550 5.1.1 no such mailbox"
        if local == "later":
            return "451 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        parsed = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(parsed, EmailMessage)
        self.mailbox.messages.append(Received(envelope.mail_from, list(envelope.rcpt_tos),
                                              parsed))
        return "250 OK"


def self_signed_cert(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost, and its key."""
    if shutil.which("openssl") is None:
        import pytest
        pytest.skip("the openssl tool is needed to make a test certificate")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True)
    return cert, key


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def receiving(security: str = "none", cert: tuple[Path, Path] | None = None,
              login: bool = False) -> Iterator[Mailbox]:
    """`security`: none, starttls (required before anything else) or tls (implicit)."""
    mailbox = Mailbox(free_port())
    kwargs: dict[str, Any] = {}
    context = None
    if security != "none":
        assert cert is not None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(cert[0]), str(cert[1]))
    if security == "starttls":
        kwargs.update(tls_context=context, require_starttls=True)
    elif security == "tls":
        kwargs.update(ssl_context=context)
    if login:
        def authenticate(server: Any, session: Any, envelope: Any, mechanism: str,
                         auth_data: Any) -> AuthResult:
            ok = (isinstance(auth_data, LoginPassword) and auth_data.login == USER.encode()
                  and auth_data.password == PASSWORD.encode())
            if ok:
                mailbox.logins.append(USER)
            return AuthResult(success=ok, handled=False)
        kwargs.update(authenticator=authenticate, auth_required=True,
                      auth_require_tls=security != "none")
    controller = Controller(_Handler(mailbox), hostname="127.0.0.1", port=mailbox.port,
                            server_hostname="localhost", **kwargs)
    controller.start()
    try:
        yield mailbox
    finally:
        controller.stop()
