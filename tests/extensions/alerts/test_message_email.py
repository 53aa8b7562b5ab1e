"""The email: plain text plus an HTML alternative, client text escaped in the HTML and
kept to one line in the subject, the alert id in a header."""

from __future__ import annotations

from email import message_from_bytes, policy
from email.message import EmailMessage

from extensions.alerts.message import Digest
from extensions.alerts.message_email import email
from tests.extensions.alerts.facts import alert, alerts, new_group


def _parts(mail: EmailMessage) -> tuple[str, str]:
    # Through bytes and back: what a mail client would read.
    parsed = message_from_bytes(mail.as_bytes(), policy=policy.default)
    assert isinstance(parsed, EmailMessage)
    assert parsed.get_content_type() == "multipart/alternative"
    plain = parsed.get_body(("plain",))
    rich = parsed.get_body(("html",))
    assert plain is not None and rich is not None
    return plain.get_content(), rich.get_content()


def test_an_alert_is_plain_text_and_html() -> None:
    a = alert()
    mail = email(a, "Sounding <alerts@example.com>", ["ops@example.com", "dev@example.com"])
    assert mail["Subject"] == "[Sounding] shop: New error: KeyError: 'sku'"
    assert mail["To"] == "ops@example.com, dev@example.com"
    assert mail["X-Sounding-Alert-Id"] == a.id
    assert mail["Message-ID"].endswith("@example.com>")
    plain, rich = _parts(mail)
    assert plain.startswith("New error: KeyError: 'sku'\n")
    assert "Environment: production" in plain and a.link and a.link in plain
    assert "<h2>New error: KeyError: &#x27;sku&#x27;</h2>" in rich
    assert f'<a href="{a.link}">Open in Sounding</a>' in rich


def test_client_text_is_escaped_in_html_and_one_line_in_the_subject() -> None:
    a = alert(new_group(message="<script>alert(1)</script>\r\nBcc: victim@example.com",
                        service='"><img src=x>'))
    mail = email(a, "alerts@example.com", ["ops@example.com"])
    assert "\n" not in mail["Subject"] and mail["Bcc"] is None
    _, rich = _parts(mail)
    assert "<script>" not in rich and "<img" not in rich
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rich
    assert "&quot;&gt;&lt;img src=x&gt;" in rich


def test_a_digest_names_every_alert() -> None:
    digest = Digest(alerts(300), more=2)
    mail = email(digest, "alerts@example.com", ["ops@example.com"])
    assert mail["Subject"] == "[Sounding] 302 alerts (digest)"
    assert mail["X-Sounding-Alert-Id"] == digest.id
    plain, rich = _parts(mail)
    for i in range(300):
        assert f"missing key number {i}\n" in plain
        assert f"missing key number {i}</a>" in rich
    assert "and 2 more" in plain and "and 2 more" in rich
