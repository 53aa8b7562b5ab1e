"""The email destination: the alert as a plain-text and HTML message
(message_email.email), over SMTP with STARTTLS, implicit TLS or neither, logged in
with a user and password when given. smtplib blocks, so each send runs in a thread.

SMTP's reply codes carry the outcome: 4xx is "try later" (greylisting, a full
mailbox, a busy server), 5xx is "never" (an unknown recipient, authentication
refused). The password is never logged nor shown; neither is the server's text.
"""

from __future__ import annotations

import asyncio
import smtplib
import socket
import ssl
from email.message import EmailMessage
from typing import Any

from extensions.alerts.message import Message
from extensions.alerts.message_email import email
from runtime.retry import Failed, Retry, SendResult, Sent

SECURITY = ("starttls", "tls", "none")
DEFAULT_PORTS = {"starttls": 587, "tls": 465, "none": 25}


def outcome_of_reply(code: int, what: str) -> SendResult:
    if 400 <= code < 500:
        return Retry(None, f"smtp {code}{what}")
    if 500 <= code < 600:
        return Failed(f"smtp {code}{what}")
    return Retry(None, f"smtp {code}{what}")  # not a reply code: a broken exchange


class EmailDestination:
    type = "email"

    def __init__(self, config: dict[str, Any]) -> None:
        self.name: str = config["name"]
        self._host: str = config["host"]
        self._security: str = config.get("security") or "starttls"
        self._port = int(config.get("port") or DEFAULT_PORTS[self._security])
        self._user: str | None = config.get("user") or None
        self._password: str = config.get("password") or ""
        self._from: str = config["from"]
        self._to: list[str] = list(config["to"])
        self._timeout_s = float(config.get("timeout_s") or 10.0)
        self._ca_file: str | None = config.get("ca_file") or None

    def __repr__(self) -> str:  # never the password, even in a traceback
        return f"EmailDestination({self.name!r})"

    async def send(self, message: Message) -> SendResult:
        mail = email(message, self._from, self._to)
        return await asyncio.to_thread(self._deliver, mail)

    def _deliver(self, mail: EmailMessage) -> SendResult:
        try:
            self._exchange(mail)
        except smtplib.SMTPRecipientsRefused as exc:
            codes = [code for code, _ in exc.recipients.values()]
            return outcome_of_reply(min(codes) if codes else 550, " (recipients refused)")
        except smtplib.SMTPAuthenticationError as exc:
            return outcome_of_reply(exc.smtp_code, " (authentication refused)")
        except smtplib.SMTPResponseException as exc:  # sender, data, greeting refused
            return outcome_of_reply(exc.smtp_code, "")
        except smtplib.SMTPNotSupportedError:
            return Failed("smtp: the server offers no STARTTLS or no AUTH")
        except smtplib.SMTPServerDisconnected:
            return Retry(None, "connection: closed by the server")
        except smtplib.SMTPException as exc:
            return Retry(None, f"smtp: {type(exc).__name__}")
        except ssl.SSLCertVerificationError:
            return Failed("tls: certificate not trusted")
        except TimeoutError:
            return Retry(None, "timeout")
        except OSError as exc:  # refused, unreachable, DNS, TLS handshake
            return Retry(None, f"connection: {type(exc).__name__}")
        return Sent()

    def _exchange(self, mail: EmailMessage) -> None:
        context = ssl.create_default_context(cafile=self._ca_file)
        # This host's name for EHLO without asking DNS (smtplib's default does).
        hostname = socket.gethostname() or "localhost"
        client: smtplib.SMTP
        if self._security == "tls":
            client = smtplib.SMTP_SSL(self._host, self._port, local_hostname=hostname,
                                      timeout=self._timeout_s, context=context)
        else:
            client = smtplib.SMTP(self._host, self._port, local_hostname=hostname,
                                  timeout=self._timeout_s)
        with client:
            if self._security == "starttls":
                client.starttls(context=context)
            if self._user is not None:
                client.login(self._user, self._password)
            # Recipients some of whom were refused: the others have it; that is sent.
            client.send_message(mail)
