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


def _flag(args: list[str], name: str) -> str:
    (value,) = [a.split("=", 1)[1] for a in args if a.startswith(f"--{name}=")]
    return value


def test_the_tournament_job_runs_one_shard_per_completion_index() -> None:
    pvc, job = _documents(K8S / "jobs" / "tournament.yaml")
    (merge,) = _documents(K8S / "jobs" / "tournament-merge.yaml")
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    container = spec["template"]["spec"]["containers"][0]
    args = container["args"]
    assert args[0] == "tournament"
    # one shard per index: the index is JOB_COMPLETION_INDEX (the CLI's default)
    assert int(_flag(args, "shards")) == spec["completions"]
    assert not [a for a in args if a.startswith("--shard-index")]
    from glintwick_cli import build_parser

    parsed = build_parser().parse_args(args)
    assert parsed.shards == spec["completions"] and not parsed.merge
    # the shards write where the merge reads, on one volume every pod can write
    assert "ReadWriteMany" in pvc["spec"]["accessModes"]
    out = _flag(args, "out")
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts["results"] == out
    merge_container = merge["spec"]["template"]["spec"]["containers"][0]
    merge_args = merge_container["args"]
    assert merge_args[:3] == ["tournament", "merge", out]
    assert build_parser().parse_args(merge_args).merge == ["merge", out]
    for pod in (job, merge):
        volumes = pod["spec"]["template"]["spec"]["volumes"]
        claims = [
            v["persistentVolumeClaim"]["claimName"] for v in volumes if "persistentVolumeClaim" in v
        ]
        assert claims == [pvc["metadata"]["name"]]
