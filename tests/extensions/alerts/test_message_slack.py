"""Slack's incoming-webhook body: text plus blocks within Slack's limits, client text
escaped, a digest naming every alert it can hold and counting the rest."""

from __future__ import annotations

import json
from typing import Any

from extensions.alerts.message import Digest
from extensions.alerts.message_slack import slack_body
from tests.extensions.alerts.facts import alert, alerts, new_group


def _body(message: Any) -> dict[str, Any]:
    document = json.loads(slack_body(message))
    assert set(document) == {"text", "blocks"}
    assert 1 <= len(document["blocks"]) <= 50
    for block in document["blocks"]:
        if block["type"] == "header":
            assert len(block["text"]["text"]) <= 150
        if block["type"] == "section" and "text" in block:
            assert len(block["text"]["text"]) <= 3000
    return document


def _texts(document: dict[str, Any]) -> str:
    return json.dumps(document["blocks"], ensure_ascii=False)


def test_an_alert_is_text_plus_blocks() -> None:
    document = _body(alert())
    assert document["text"] == "[shop] New error: KeyError: 'sku'"
    kinds = [block["type"] for block in document["blocks"]]
    assert kinds == ["header", "section", "section", "context"]
    assert document["blocks"][0]["text"] == {"type": "plain_text",
                                             "text": "New error: KeyError: 'sku'"}
    fields = [f["text"] for f in document["blocks"][2]["fields"]]
    assert fields == ["*Project*\nshop", "*Environment*\nproduction", "*Release*\n1.4.2",
                      "*Service*\ncheckout"]
    footer = document["blocks"][3]["elements"][0]["text"]
    assert footer.startswith("<https://sounding.example.com/projects/shop/errors/12"
                             "|Open in Sounding>")
    assert alert().id in footer


def test_client_text_is_escaped_for_slack_markup() -> None:
    document = _body(alert(new_group(message="<!channel> & <https://evil.example|click>",
                                     service="<svc>")))
    # The header is plain_text, shown as it is; everything in mrkdwn is escaped.
    header = document["blocks"][0]
    assert header["text"]["type"] == "plain_text" and "<!channel>" in header["text"]["text"]
    blob = document["text"] + json.dumps(document["blocks"][1:], ensure_ascii=False)
    assert "<!channel>" not in blob and "<https://evil" not in blob
    assert "&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;" in document["text"]
    assert "*Service*\\n&lt;svc&gt;" in _texts(document)


def test_a_digest_names_every_alert() -> None:
    digest = Digest(alerts(40))
    document = _body(digest)
    blob = _texts(document)
    for i in range(40):
        assert f"missing key number {i}'" in blob or f"missing key number {i}|" in blob \
            or f"missing key number {i}>" in blob
    assert document["blocks"][0]["text"]["text"] == "40 alerts (digest)"
    assert document["blocks"][-1]["elements"][0]["text"] == f"digest id {digest.id}"


def test_a_digest_too_big_for_slack_counts_what_it_leaves_out() -> None:
    digest = Digest(alerts(2000), more=7)
    document = _body(digest)
    sections = [b["text"]["text"] for b in document["blocks"] if b["type"] == "section"]
    listed = sum(text.count("\n") + 1 for text in sections)
    assert 0 < listed < 2000
    # Every line listed is a whole alert, in order, and the rest are counted.
    lines = "\n".join(sections).split("\n")
    assert all(f"missing key number {i}" in line for i, line in enumerate(lines))
    tail = document["blocks"][-1]["elements"][0]["text"]
    assert tail == f"and {2007 - listed} more: see the dashboard"
