"""deploy/kubernetes: every manifest valid against Kubernetes' own schemas (offline,
kubernetes-validate, strict: an unknown field is an error), the gateway on PostgreSQL
from a Secret with 2 replicas and /health probes, and the sidecar's configuration
accepted by Sounding's own loader as the pod would give it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from dockerfile_parse import DockerfileParser

from runtime.factory import type_of
from sounding import config

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "deploy" / "kubernetes"
# The oldest Kubernetes the example is checked against, and the newest the package has.
VERSIONS = ["1.30", kubernetes_validate.latest_version()]


def _documents() -> list[dict[str, Any]]:
    found = [doc for path in sorted(FOLDER.glob("*.yaml"))
             for doc in yaml.safe_load_all(path.read_text()) if doc]
    assert len(found) >= 6
    return found


def _one(kind: str, name: str) -> dict[str, Any]:
    (doc,) = [d for d in _documents() if d["kind"] == kind and d["metadata"]["name"] == name]
    return doc


@pytest.mark.parametrize("version", VERSIONS)
def test_every_manifest_is_valid_against_the_schemas(version: str) -> None:
    for doc in _documents():
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            raise AssertionError(f"{doc['kind']}/{doc['metadata']['name']}: {exc}") from exc


def test_the_validator_refuses_a_wrong_field() -> None:
    gateway = _one("Deployment", "sounding-gateway")
    gateway["spec"]["replica"] = gateway["spec"].pop("replicas")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(gateway, VERSIONS[-1], strict=True)


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def _probe_path(probe: dict[str, Any]) -> str:
    if "httpGet" in probe:
        return str(probe["httpGet"]["path"])
    return " ".join(probe["exec"]["command"])


def test_the_gateway_runs_two_replicas_on_postgresql_from_a_secret() -> None:
    deployment = _one("Deployment", "sounding-gateway")
    assert deployment["spec"]["replicas"] == 2
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    env = _env(container)
    assert env["SOUNDING_DATABASE_URL"] == {
        "secretKeyRef": {"name": "sounding-gateway", "key": "database-url"}}
    secret = _one("Secret", "sounding-gateway")
    assert secret["stringData"]["database-url"].startswith("postgresql://")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert _probe_path(container[probe]) == "/health"
    service = _one("Service", "sounding-gateway")
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert {p["port"] for p in service["spec"]["ports"]} == {3000, 4317}
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True


def test_the_sidecar_forwards_to_the_gateway_service_and_its_config_loads(
        tmp_path: Path) -> None:
    deployment = _one("Deployment", "shop")
    pod = deployment["spec"]["template"]["spec"]
    (sidecar,) = [c for c in pod["containers"] if c["name"] == "sounding"]
    assert "/health" in _probe_path(sidecar["startupProbe"])
    assert "/health" in _probe_path(sidecar["livenessProbe"])
    text = _one("ConfigMap", "sounding-sidecar")["data"]["sidecar.yaml"]
    path = Path(sidecar["args"][sidecar["args"].index("--config") + 1])
    assert path.name == "sidecar.yaml"
    # What the pod's environment gives it: the image's ENV, then the Secret's values.
    secret = _one("Secret", "sounding-sidecar")["stringData"]
    environ = {**DockerfileParser(str(REPO / "Dockerfile")).envs,
               **{name: secret[ref["secretKeyRef"]["key"]]
                  for name, ref in _env(sidecar).items()}}
    (tmp_path / "sidecar.yaml").write_text(text)
    loaded = config.load(tmp_path / "sidecar.yaml", environ=environ)
    pipeline = loaded["service"]["pipeline"]
    assert pipeline["exporters"] == ["forward"] and pipeline["processors"] == []
    forward = loaded["exporters"]["forward"]
    service = _one("Service", "sounding-gateway")
    assert forward["endpoint"] == f"http://{service['metadata']['name']}:3000"
    assert forward["headers"] == {"authorization": secret["gateway-authorization"]}
    assert loaded["dashboard"]["enabled"] is False
    # The queue is on the pod's volume, not in the container's read-only root.
    mounts = {m["name"]: m["mountPath"] for m in sidecar["volumeMounts"]}
    assert loaded["storage"]["url"].startswith(f"sqlite:///{mounts['sounding-data']}/")
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes["sounding-data"]
    assert all(type_of(name) != "sql" for name in pipeline["exporters"])

