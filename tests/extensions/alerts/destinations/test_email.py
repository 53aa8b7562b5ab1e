"""The email destination against a real local SMTP server (aiosmtpd): plain,
STARTTLS with a login, implicit TLS; and what refusals, a dead port and an untrusted
certificate come to."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest

from extensions.alerts.destinations import build
from extensions.alerts.message import Digest, Message
from runtime.retry import Failed, Retry, Sent
from tests.extensions.alerts.facts import alert, alerts
from tests.support.smtp import PASSWORD, USER, receiving, self_signed_cert


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return self_signed_cert(tmp_path_factory.mktemp("tls"))


def _send(port: int, message: Message, **config: Any) -> Any:
    destination = build({"name": "mail", "type": "email", "host": "127.0.0.1", "port": port,
                         "security": "none", "from": "Sounding <alerts@example.com>",
                         "to": ["ops@example.com", "dev@example.com"], "timeout_s": 5,
                         **config})
    return asyncio.run(destination.send(message))


def test_an_alert_is_delivered_over_plain_smtp() -> None:
    a = alert()
    with receiving() as mailbox:
        assert _send(mailbox.port, a) == Sent()
    [received] = mailbox.messages
    assert received.mail_from == "alerts@example.com"
    assert received.rcpt_tos == ["ops@example.com", "dev@example.com"]
    mail = received.message
    assert mail["Subject"] == "[Sounding] shop: New error: KeyError: 'sku'"
    assert mail["X-Sounding-Alert-Id"] == a.id
    assert mail.get_content_type() == "multipart/alternative"
    plain, rich = mail.get_body(("plain",)), mail.get_body(("html",))
    assert plain is not None and "KeyError: 'sku'" in plain.get_content()
    assert rich is not None and "KeyError: &#x27;sku&#x27;" in rich.get_content()


def test_starttls_with_a_login(cert: tuple[Path, Path]) -> None:
    with receiving("starttls", cert, login=True) as mailbox:
        outcome = _send(mailbox.port, alert(), security="starttls", user=USER,
                        password=PASSWORD, ca_file=str(cert[0]))
    assert outcome == Sent()
    assert mailbox.logins == [USER] and len(mailbox.messages) == 1


def test_implicit_tls(cert: tuple[Path, Path]) -> None:
    with receiving("tls", cert) as mailbox:
        outcome = _send(mailbox.port, Digest(alerts(3)), security="tls",
                        ca_file=str(cert[0]))
    assert outcome == Sent()
    assert mailbox.messages[0].message["Subject"] == "[Sounding] 3 alerts (digest)"


def test_a_wrong_password_fails(cert: tuple[Path, Path]) -> None:
    with receiving("starttls", cert, login=True) as mailbox:
        outcome = _send(mailbox.port, alert(), security="starttls", user=USER,
                        password="wrong", ca_file=str(cert[0]))
    assert outcome == Failed("smtp 535 (authentication refused)")
    assert "wrong" not in repr(outcome) and mailbox.messages == []


def test_an_untrusted_certificate_fails(cert: tuple[Path, Path]) -> None:
    with receiving("starttls", cert) as mailbox:
        outcome = _send(mailbox.port, alert(), security="starttls")
    assert outcome == Failed("tls: certificate not trusted")
    assert mailbox.messages == []


def test_a_server_without_starttls_fails_when_starttls_is_asked() -> None:
    with receiving() as mailbox:
        outcome = _send(mailbox.port, alert(), security="starttls")
    assert outcome == Failed("smtp: the server offers no STARTTLS or no AUTH")
    assert mailbox.messages == []


def test_refused_recipients_fail_and_deferred_ones_retry() -> None:
    with receiving() as mailbox:
        refused = _send(mailbox.port, alert(), to=["refuse@example.com"])
        deferred = _send(mailbox.port, alert(), to=["later@example.com"])
        partly = _send(mailbox.port, alert(), to=["refuse@example.com", "ops@example.com"])
    assert refused == Failed("smtp 550 (recipients refused)")
    assert deferred == Retry(None, "smtp 451 (recipients refused)")
    # One recipient took it: that is sent (the message is not sent twice to the other).
    assert partly == Sent()
    assert [m.rcpt_tos for m in mailbox.messages] == [["ops@example.com"]]


def test_a_refused_connection_is_retry() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    outcome = _send(port, alert())
    assert outcome == Retry(None, "connection: ConnectionRefusedError")
