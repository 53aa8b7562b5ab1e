"""`sounding check-config`: exit 2 naming the error, or the effective configuration
as YAML with every secret masked."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml

from tests.sounding.cli.conftest import Run

SECRETS = {
    "pg_password": "pgpass-Zq81",
    "api_key_1": "ingestkey-Aa11",
    "api_key_2": "ingestkey-Bb22",
    "admin_token": "admintoken-Cc33-0123456789",
    "cookie_secret": "cookiesecret-Dd44-012345678",
    "secrets_key": "secretskey-Ee55-0123456789abcdef",
    "slack_path": "T000/B000/SlackPathFf66",
    "webhook_secret": "webhooksecret-Gg77",
    "smtp_password": "smtppass-Hh88",
    "forward_header": "Bearer fwdtoken-Ii99",
    "forward_password": "fwdpass-Jj00",
    "query_token": "querytoken-Kk11",
    "oidc_client_secret": "oidcclientsecret-Mm22",
}

CONFIG = f"""
storage:
  url: postgresql://sounding:{SECRETS['pg_password']}@127.0.0.1:5432/test
auth:
  api_keys: "acme:{SECRETS['api_key_1']},shop:{SECRETS['api_key_2']}"
dashboard:
  admin_token: {SECRETS['admin_token']}
  cookie_secret: {SECRETS['cookie_secret']}
  oidc:
    providers:
      - {{name: corp, issuer: "https://login.example.com/realms/corp", client_id: sounding,
         client_secret: {SECRETS['oidc_client_secret']}, role_map: {{staff: member}}}}
alerts:
  secrets_key: {SECRETS['secrets_key']}
  destinations:
    - {{name: team, type: slack,
       url: "https://hooks.slack.com/services/{SECRETS['slack_path']}"}}
    - {{name: hook, type: webhook, url: "https://example.com/hook",
       secret: {SECRETS['webhook_secret']}}}
    - {{name: mail, type: email, host: 127.0.0.1, port: 25, user: bob,
       password: {SECRETS['smtp_password']}, from: a@example.com, to: [b@example.com]}}
exporters:
  forward:
    endpoint: "https://relay:{SECRETS['forward_password']}@collector.example.com\
?region=eu&token={SECRETS['query_token']}"
    headers:
      Authorization: "{SECRETS['forward_header']}"
service:
  pipeline:
    receivers: [http]
    processors: [grouping, reopen]
    exporters: [sql, forward]
"""


def test_every_secret_is_masked_and_the_rest_is_shown(cli: Callable[..., Run],
                                                      tmp_path: Path) -> None:
    path = tmp_path / "sounding.yaml"
    path.write_text(CONFIG)
    result = cli("check-config", "--config", str(path))
    assert result.code == 0, result.err
    for name, secret in SECRETS.items():
        assert secret not in result.out, f"{name} is shown: {result.out}"
    shown = yaml.safe_load(result.out)
    assert shown["storage"]["url"] == "postgresql://sounding:***@127.0.0.1:5432/test"
    assert shown["auth"]["api_keys"] == "acme:***,shop:***"
    assert shown["dashboard"]["admin_token"] == shown["dashboard"]["cookie_secret"] == "***"
    assert shown["alerts"]["secrets_key"] == "***"
    team, hook, mail = shown["alerts"]["destinations"]
    assert team["url"] == "https://hooks.slack.com/***"
    assert (hook["url"], hook["secret"]) == ("https://example.com/***", "***")
    assert (mail["user"], mail["password"]) == ("bob", "***")
    forward = shown["exporters"]["forward"]
    assert forward["endpoint"] == ("https://relay:***@collector.example.com"
                                   "?region=eu&token=***")
    assert forward["headers"] == {"Authorization": "***"}
    corp = shown["dashboard"]["oidc"]["providers"][0]
    assert (corp["client_id"], corp["client_secret"]) == ("sounding", "***")
    assert corp["role_map"] == {"staff": "member"}
    # What is not secret is there as configured, defaults filled in.
    assert shown["receivers"]["http"]["port"] == 3000
    assert shown["dashboard"]["session_days"] == 7
    assert shown["exporters"]["forward"]["tls"]["key_file"] == ""
    assert shown["service"]["pipeline"]["exporters"] == ["sql", "forward"]


def test_secrets_from_the_environment_are_masked_too(cli: Callable[..., Run]) -> None:
    result = cli("check-config", SOUNDING_API_KEYS="acme:envkey-Kk11",
                 SOUNDING_ADMIN_TOKEN="envadmintoken-Ll22-0123456",
                 SOUNDING_DATABASE_URL="sqlite:///x.db")
    assert result.code == 0, result.err
    assert "envkey-Kk11" not in result.out and "envadmintoken" not in result.out
    shown = yaml.safe_load(result.out)
    assert shown["auth"]["api_keys"] == "acme:***"
    assert shown["storage"]["url"] == "sqlite:///x.db"


def test_a_bad_file_exits_2_naming_the_error_after_or_before_the_command(
        cli: Callable[..., Run], tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("receivers:\n  http:\n    prot: 3001\n")
    for args in (["check-config", "--config", str(path)],
                 ["--config", str(path), "check-config"]):
        result = cli(*args)
        assert result.code == 2
        assert "receivers.http.prot (did you mean port?)" in result.err
        assert result.out == ""


def test_the_old_pipelines_mapping_exits_2_naming_the_new_key(cli: Callable[..., Run],
                                                              tmp_path: Path) -> None:
    path = tmp_path / "old.yaml"
    path.write_text(CONFIG.replace("  pipeline:\n", "  pipelines:\n    default:\n")
                    .replace("\n    receivers:", "\n      receivers:")
                    .replace("\n    processors:", "\n      processors:")
                    .replace("\n    exporters:", "\n      exporters:"))
    result = cli("check-config", "--config", str(path))
    assert result.code == 2 and result.out == ""
    assert ("Move the receivers, processors and exporters of service.pipelines.default up "
            "to service.pipeline") in result.err


def test_a_bad_identity_provider_exits_2_naming_its_key(cli: Callable[..., Run],
                                                         tmp_path: Path) -> None:
    provider = ('{name: corp, issuer: "https://login.example.com", client_id: sounding, '
                'client_secret: s, role_map: {staff: %s}%s}')
    cases = {
        provider % ("boss", ""): "dashboard.oidc.providers[0].role_map['staff'] must be one of",
        provider % ("member", ", scope: [openid]"):
            "unknown key dashboard.oidc.providers[0].scope (did you mean scopes?)",
        provider.replace("client_secret: s, ", "") % ("member", ""):
            "dashboard.oidc.providers[0].client_secret is required",
    }
    for entry, error in cases.items():
        path = tmp_path / "bad.yaml"
        path.write_text(f"dashboard:\n  oidc:\n    providers:\n      - {entry}\n")
        result = cli("check-config", "--config", str(path))
        assert result.code == 2 and error in result.err, (entry, result.err)
    path.write_text("dashboard:\n  sso_only: true\n")
    result = cli("check-config", "--config", str(path))
    assert result.code == 2
    assert "dashboard.sso_only needs at least one dashboard.oidc.providers entry" in result.err
