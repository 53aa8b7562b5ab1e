"""An alert as an email: plain text plus an HTML alternative. Pure (the Date header
aside, which the caller may pin).

Every client string (titles carry exception messages, releases, service names) is
escaped in the HTML, and collapsed to one line in a header: a newline in a header
value would let a client add headers of its own.
"""

from __future__ import annotations

import html
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from extensions.alerts.message import Alert, Message, clip, iso

SUBJECT_LIMIT = 180


def _fields(alert: Alert) -> list[tuple[str, str]]:
    fields = [("Project", alert.project), ("Kind", alert.kind),
              ("Environment", alert.environment), ("Release", alert.release),
              ("Service", alert.service), ("First seen", iso(alert.first_seen_us)),
              ("Last seen", iso(alert.last_seen_us))]
    fields += [(name, str(value)) for name, value in alert.counts.items()]
    fields.append(("Alert id", alert.id))
    return [(name, value) for name, value in fields if value]


def _href(link: str | None) -> str | None:
    # Only http(s): the link is built from configuration, but an href is code.
    return link if link and link.startswith(("https://", "http://")) else None


def _text(message: Message) -> str:
    if isinstance(message, Alert):
        lines = [message.title, "", message.summary, ""]
        lines += [f"{name}: {value}" for name, value in _fields(message)]
        if message.link:
            lines += ["", message.link]
        return "\n".join(lines) + "\n"
    lines = [f"{message.count} alerts (digest)", ""]
    for alert in message.alerts:
        lines.append(f"- [{alert.project}] {alert.title}")
        if alert.link:
            lines.append(f"  {alert.link}")
    if message.more:
        lines += ["", f"and {message.more} more: see the dashboard"]
    return "\n".join(lines) + "\n"


def _html_alert(alert: Alert) -> str:
    e = html.escape
    rows = "".join(f"<tr><th align=\"left\">{e(name)}</th><td>{e(value)}</td></tr>"
                   for name, value in _fields(alert))
    href = _href(alert.link)
    link = f"<p><a href=\"{e(href)}\">Open in Sounding</a></p>" if href else ""
    return (f"<h2>{e(alert.title)}</h2><p>{e(alert.summary)}</p>"
            f"<table>{rows}</table>{link}")


def _html(message: Message) -> str:
    e = html.escape
    if isinstance(message, Alert):
        body = _html_alert(message)
    else:
        items = []
        for alert in message.alerts:
            href = _href(alert.link)
            title = f"<a href=\"{e(href)}\">{e(alert.title)}</a>" if href else e(alert.title)
            items.append(f"<li>[{e(alert.project)}] {title}</li>")
        more = f"<p>and {message.more} more: see the dashboard</p>" if message.more else ""
        body = f"<h2>{message.count} alerts (digest)</h2><ul>{''.join(items)}</ul>{more}"
    return f"<!doctype html><html><body>{body}</body></html>\n"


def subject(message: Message) -> str:
    if isinstance(message, Alert):
        return clip(f"[Sounding] {message.project}: {message.title}", SUBJECT_LIMIT)
    return f"[Sounding] {message.count} alerts (digest)"


def email(message: Message, sender: str, to: list[str], date: float | None = None,
          ) -> EmailMessage:
    mail = EmailMessage()
    mail["Subject"] = subject(message)
    mail["From"] = sender
    mail["To"] = ", ".join(to)
    mail["Date"] = formatdate(date, usegmt=True)
    # The sender's domain, not this host's name: make_msgid would otherwise look the
    # host name up (slow where DNS is) and show it.
    domain = sender.rpartition("@")[2].strip(" >") or "sounding.invalid"
    mail["Message-ID"] = make_msgid(domain=domain)
    # The alert's id, so that a mail filter or a ticketing system can deduplicate.
    mail["X-Sounding-Alert-Id"] = message.id
    mail.set_content(_text(message))
    mail.add_alternative(_html(message), subtype="html")
    return mail
