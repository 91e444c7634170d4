"""The Kubernetes manifests validate offline against the API schemas and agree with the server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

K8S = Path(__file__).parents[2] / "k8s"


def _documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


MANIFESTS = sorted(p for p in K8S.rglob("*.yaml") if p.name != "kustomization.yaml")


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: str(p.relative_to(K8S)))
def test_manifest_is_valid_kubernetes(path: Path) -> None:
    for document in _documents(path):
        kubernetes_validate.validate(document, "1.30.0", strict=True)


def test_kustomizations_name_existing_files() -> None:
    for kustomization in K8S.rglob("kustomization.yaml"):
        data = _documents(kustomization)[0]
        for resource in data["resources"]:
            assert (kustomization.parent / resource).exists(), f"{kustomization}: {resource}"


def test_deployment_probes_and_ports_match_the_server() -> None:
    (deployment,) = _documents(K8S / "base" / "deployment.yaml")
    (config,) = _documents(K8S / "base" / "configmap.yaml")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert config["data"]["GLINTWICK_GRPC"].endswith(f":{ports['grpc']}")
    assert config["data"]["GLINTWICK_HTTP"].endswith(f":{ports['http']}")
    assert config["data"]["GLINTWICK_STORE"].startswith("redis://")  # replicas share Redis
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["grpc"]["port"] == ports["grpc"]
