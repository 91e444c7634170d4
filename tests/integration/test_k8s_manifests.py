"""The Kubernetes manifests validate offline against the API schemas and agree with the server.

Every object of every manifest is checked by ``kubernetes_validate`` (strict, 1.30),
except the custom resources of the Redis operator (k8s/overlays/production/redis.yaml),
which no Kubernetes schema knows: for those, every field we set is one this test knows,
and the Kubernetes types they embed (a pod's and a container's security context,
resources, affinity, the volume claim, the password's secret reference) are validated
as the Pod and PersistentVolumeClaim the operator makes of them. Each overlay is
built with kustomize (kubectl's, offline) and its output checked the same way, with
what the deployment promises: every pod at the "restricted" Pod Security level, no
image without a tag or tagged ``latest``, every policy, budget and anti-affinity
selecting the pods it is about, every Secret either made by the overlay or listed in
docs/OPERATIONS.md.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).parents[2]
K8S = ROOT / "k8s"
KUBERNETES = "1.30.0"
OVERLAYS = sorted(p.parent for p in (K8S / "overlays").glob("*/kustomization.yaml"))

#: the Redis operator's API (OpsTree redis-operator, pinned in docs/OPERATIONS.md)
OPERATOR_API = "redis.redis.opstreelabs.in/v1beta2"
#: the fields of its resources that we set, by kind: one more fails the test, so that
#: nothing reaches the operator unchecked (each is validated or asserted below)
OPERATOR_FIELDS = {
    "RedisReplication": {
        "clusterSize",
        "kubernetesConfig",
        "redisConfig",
        "storage",
        "podSecurityContext",
        "securityContext",
        "affinity",
    },
    "RedisSentinel": {
        "clusterSize",
        "kubernetesConfig",
        "redisSentinelConfig",
        "podSecurityContext",
        "securityContext",
        "affinity",
    },
}
KUBERNETES_CONFIG_FIELDS = {"image", "imagePullPolicy", "redisSecret", "resources"}

Doc = dict[str, Any]


def _documents(path: Path) -> list[Doc]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _is_operator_resource(document: Doc) -> bool:
    return bool(document["apiVersion"] == OPERATOR_API)


MANIFESTS = sorted(p for p in K8S.rglob("*.yaml") if p.name != "kustomization.yaml")
ALL_DOCUMENTS = [d for p in MANIFESTS for d in _documents(p)]


def _built(overlay: Path) -> list[Doc]:
    """``kubectl kustomize overlay``: the objects the overlay applies (offline)."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:  # (Debian's kubectl package is on every machine of the project)
        pytest.skip("kubectl (its built-in kustomize) is not installed")
    return [d for d in yaml.safe_load_all(_kustomize(kubectl, overlay)) if d]


@functools.cache
def _kustomize(kubectl: str, overlay: Path) -> str:
    out = subprocess.run(
        [kubectl, "kustomize", str(overlay)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


# ------------------------------------------------------------------ the operator's resources


def operator_pod(resource: Doc) -> Doc:
    """The Pod the operator makes of one of its resources (the fields we set)."""
    spec = resource["spec"]
    unknown = set(spec) - OPERATOR_FIELDS[resource["kind"]]
    assert not unknown, f"{resource['metadata']['name']}: fields this test does not check {unknown}"
    config = spec["kubernetesConfig"]
    assert set(config) <= KUBERNETES_CONFIG_FIELDS, set(config) - KUBERNETES_CONFIG_FIELDS
    env = [{"name": "REDIS_PASSWORD", "valueFrom": {"secretKeyRef": config["redisSecret"]}}]
    sentinel = spec.get("redisSentinelConfig")
    if sentinel is not None:
        env.append({"name": "MASTER_PASSWORD", "valueFrom": sentinel["redisReplicationPassword"]})
    container = {
        "name": "redis",
        "image": config["image"],
        "imagePullPolicy": config["imagePullPolicy"],
        "resources": config["resources"],
        "securityContext": spec["securityContext"],
        "env": env,
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": resource["metadata"],
        "spec": {
            "securityContext": spec["podSecurityContext"],
            "affinity": spec["affinity"],
            "containers": [container],
        },
    }


def _operator_resources(documents: list[Doc]) -> dict[str, Doc]:
    return {d["kind"]: d for d in documents if _is_operator_resource(d)}


def test_only_the_operator_resources_we_check_are_not_kubernetes_objects() -> None:
    kinds = [d["kind"] for d in ALL_DOCUMENTS if _is_operator_resource(d)]
    assert sorted(kinds) == sorted(OPERATOR_FIELDS)


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: str(p.relative_to(K8S)))
def test_manifest_is_valid_kubernetes(path: Path) -> None:
    for document in _documents(path):
        if _is_operator_resource(document):
            kubernetes_validate.validate(operator_pod(document), KUBERNETES, strict=True)
            storage = document["spec"].get("storage")
            if storage is not None:
                claim = {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": "data"},
                    "spec": storage["volumeClaimTemplate"]["spec"],
                }
                kubernetes_validate.validate(claim, KUBERNETES, strict=True)
        else:
            kubernetes_validate.validate(document, KUBERNETES, strict=True)


def test_an_unknown_operator_field_fails_the_check() -> None:
    production = _documents(K8S / "overlays" / "production" / "redis.yaml")
    resource = _operator_resources(production)["RedisReplication"]
    typo = {**resource, "spec": {**resource["spec"], "clustersize": 3}}
    with pytest.raises(AssertionError, match="clustersize"):
        operator_pod(typo)


def test_production_redis_keeps_games_and_fails_over() -> None:
    production = K8S / "overlays" / "production"
    resources = _operator_resources(_documents(production / "redis.yaml"))
    replication, sentinel = resources["RedisReplication"], resources["RedisSentinel"]
    name = replication["metadata"]["name"]
    spec = replication["spec"]
    # a primary and two replicas, each with its data on a volume, never two on a node
    assert spec["clusterSize"] >= 3
    assert spec["storage"]["volumeClaimTemplate"]["spec"]["accessModes"] == ["ReadWriteOnce"]
    anti = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert _matches(anti[0]["labelSelector"], replication["metadata"]["labels"])
    # the append-only file, fsync'd every second, from the overlay's ConfigMap
    (config,) = _documents(production / "redis-config.yaml")
    assert config["metadata"]["name"] == spec["redisConfig"]["additionalRedisConfig"]
    directives = config["data"]["redis-additional.conf"].splitlines()
    assert "appendonly yes" in directives and "appendfsync everysec" in directives
    # Sentinels (a quorum of 3) watch this replication, with its password
    sentinel_config = sentinel["spec"]["redisSentinelConfig"]
    assert sentinel["spec"]["clusterSize"] >= 3 and int(sentinel_config["quorum"]) == 2
    assert sentinel_config["redisReplicationName"] == name
    password = spec["kubernetesConfig"]["redisSecret"]
    assert sentinel_config["redisReplicationPassword"]["secretKeyRef"] == password
    assert sentinel["spec"]["kubernetesConfig"]["redisSecret"] == password
    # the servers send that password, and the documented URL names the primary's Service
    server_env = _env(_deployment(ALL_DOCUMENTS, "glintwick"))
    assert server_env["GLINTWICK_STORE_PASSWORD"]["secretKeyRef"]["name"] == password["name"]
    assert server_env["GLINTWICK_STORE_PASSWORD"]["secretKeyRef"]["key"] == password["key"]
    assert f"redis://{name}-master:6379/0" in _production_docs()


# ------------------------------------------------------------------ pods and their images


def pod_templates(documents: list[Doc]) -> Iterator[tuple[str, dict[str, str], Doc]]:
    """(name, labels, pod spec) of every pod the documents make."""
    for document in documents:
        kind = document["kind"]
        if _is_operator_resource(document):
            pod = operator_pod(document)
            yield document["metadata"]["name"], pod["metadata"]["labels"], pod["spec"]
        elif kind == "Pod":
            yield (
                document["metadata"]["name"],
                document["metadata"].get("labels", {}),
                document["spec"],
            )
        elif kind in ("Deployment", "StatefulSet", "DaemonSet", "Job", "ReplicaSet"):
            template = document["spec"]["template"]
            yield document["metadata"]["name"], template["metadata"]["labels"], template["spec"]
        elif kind == "CronJob":
            template = document["spec"]["jobTemplate"]["spec"]["template"]
            yield document["metadata"]["name"], template["metadata"]["labels"], template["spec"]


RESTRICTED_VOLUMES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}


def restricted_violations(pod: Doc) -> list[str]:
    """What keeps ``pod`` (a pod spec) from the "restricted" Pod Security level."""
    found = []
    pod_context = pod.get("securityContext", {})
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(flag):
            found.append(flag)
    for volume in pod.get("volumes", []):
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            found.append(f"volume {volume['name']}: {kinds - RESTRICTED_VOLUMES}")
    if pod_context.get("runAsUser") == 0:
        found.append("runAsUser 0")
    for container in [*pod.get("initContainers", []), *pod["containers"]]:
        name = container["name"]
        context = container.get("securityContext", {})

        def setting(key: str, context: Doc = context) -> Any:
            return context.get(key, pod_context.get(key))

        if setting("runAsNonRoot") is not True:
            found.append(f"{name}: runAsNonRoot")
        if context.get("runAsUser") == 0:
            found.append(f"{name}: runAsUser 0")
        if (setting("seccompProfile") or {}).get("type") not in ("RuntimeDefault", "Localhost"):
            found.append(f"{name}: seccompProfile")
        if context.get("allowPrivilegeEscalation") is not False:
            found.append(f"{name}: allowPrivilegeEscalation")
        if context.get("privileged"):
            found.append(f"{name}: privileged")
        capabilities = context.get("capabilities", {})
        if "ALL" not in capabilities.get("drop", []):
            found.append(f"{name}: capabilities drop ALL")
        if set(capabilities.get("add", [])) - {"NET_BIND_SERVICE"}:
            found.append(f"{name}: capabilities add")
        for port in container.get("ports", []):
            if port.get("hostPort"):
                found.append(f"{name}: hostPort")
    return found


def image_violation(image: str) -> str | None:
    """Why ``image`` is not pinned (untagged, or tagged latest), or None."""
    if "@sha256:" in image:
        return None
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return f"{image}: no tag"
    if last.rsplit(":", 1)[1] == "latest":
        return f"{image}: latest"
    return None


def test_the_checks_can_fail() -> None:
    pod = {"containers": [{"name": "c", "image": "x"}], "volumes": [{"name": "h", "hostPath": {}}]}
    assert {v.split(":")[-1].strip() for v in restricted_violations(pod)} >= {
        "runAsNonRoot",
        "seccompProfile",
        "allowPrivilegeEscalation",
        "capabilities drop ALL",
        "{'hostPath'}",
    }
    assert image_violation("glintwick") and image_violation("reg.io:5000/glintwick:latest")
    assert image_violation("reg.io:5000/glintwick:0.3.0") is None
    assert image_violation("redis@sha256:" + "0" * 64) is None


def test_every_pod_meets_the_restricted_pod_security_level() -> None:
    pods = list(pod_templates(ALL_DOCUMENTS))
    assert len(pods) >= 7  # servers, bots, dev Redis, Redis and Sentinel, two jobs
    for name, _, pod in pods:
        assert restricted_violations(pod) == [], name


def test_every_image_is_pinned_to_a_tag() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    for name, _, pod in pod_templates(ALL_DOCUMENTS):
        for container in [*pod.get("initContainers", []), *pod["containers"]]:
            image = container["image"]
            assert image_violation(image) is None, name
            if image.startswith("glintwick"):  # ours: the version being deployed
                assert image.endswith(f":{version}"), (name, image)


# ------------------------------------------------------------------ the overlays, built


@pytest.mark.parametrize("overlay", OVERLAYS, ids=lambda p: p.name)
def test_the_overlay_builds_into_valid_restricted_objects(overlay: Path) -> None:
    documents = _built(overlay)
    for document in documents:
        if not _is_operator_resource(document):
            kubernetes_validate.validate(document, KUBERNETES, strict=True)
    pods = list(pod_templates(documents))
    for name, _, pod in pods:
        assert restricted_violations(pod) == [], name
        for container in pod["containers"]:
            assert image_violation(container["image"]) is None, name
    # the servers' store, from a Secret the overlay has or the operator makes (below)
    env = _env(_deployment(documents, "glintwick"))
    assert "secretKeyRef" in env["GLINTWICK_STORE"]
    assert not any("GLINTWICK_STORE" in d.get("data", {}) for d in documents)


@pytest.mark.parametrize("overlay", OVERLAYS, ids=lambda p: p.name)
def test_every_secret_is_made_by_the_overlay_or_documented(overlay: Path) -> None:
    documents = _built(overlay)
    made = {d["metadata"]["name"]: d.get("data", {}) for d in documents if d["kind"] == "Secret"}
    docs = _production_docs()
    for name, _, pod in pod_templates(documents):
        for container in pod["containers"]:
            for variable in container.get("env", []):
                ref = variable.get("valueFrom", {}).get("secretKeyRef")
                if ref is None or ref.get("optional"):
                    continue
                if ref["name"] in made:
                    assert ref["key"] in made[ref["name"]], (name, ref)
                else:  # the operator creates it: docs/OPERATIONS.md says how
                    assert overlay.name == "production", (name, ref)
                    assert f"`{ref['name']}`" in docs and f"`{ref['key']}`" in docs, ref
    if overlay.name == "dev":  # self-contained: the bot pool starts with no Secret made by hand
        assert {"glintwick-redis", "glintwick-bot-pool"} <= {n.rsplit("-", 1)[0] for n in made}


@pytest.mark.parametrize("overlay", OVERLAYS, ids=lambda p: p.name)
def test_policies_budgets_and_spreading_select_the_pods_they_are_about(overlay: Path) -> None:
    documents = _built(overlay)
    pods = list(pod_templates(documents))

    def selected(selector: Doc) -> list[tuple[str, dict[str, str], Doc]]:
        return [p for p in pods if _matches(selector, p[1])]

    server_labels = _template_labels(_deployment(documents, "glintwick"))
    bots_labels = _template_labels(_deployment(documents, "glintwick-bots"))
    for document in documents:
        name = document["metadata"]["name"]
        if document["kind"] == "PodDisruptionBudget":
            assert selected(document["spec"]["selector"]), name
        if document["kind"] == "NetworkPolicy":
            targets = selected(document["spec"]["podSelector"])
            assert targets, name
            for rule in document["spec"]["ingress"]:
                for port in rule["ports"]:
                    assert _has_port(targets, port["port"]), (name, port)
            if name.startswith("redis") or name.endswith("redis"):
                # Redis from the servers, never from the bot pool
                sources = [p["podSelector"] for r in document["spec"]["ingress"]
                           for p in r.get("from", []) if "podSelector" in p]  # fmt: skip
                assert any(_matches(s, server_labels) for s in sources), name
                assert not any(_matches(s, bots_labels) for s in sources), name
    for name, labels, pod in pods:
        anti = pod.get("affinity", {}).get("podAntiAffinity")
        if name.startswith("glintwick") and "tournament" not in name:
            assert anti is not None, f"{name} is not spread over nodes"
        for term in (anti or {}).get("preferredDuringSchedulingIgnoredDuringExecution", []):
            assert _matches(term["podAffinityTerm"]["labelSelector"], labels), name
        for term in (anti or {}).get("requiredDuringSchedulingIgnoredDuringExecution", []):
            assert _matches(term["labelSelector"], labels), name


# ------------------------------------------------------------------ the server and the pool


def test_kustomizations_name_existing_files() -> None:
    for kustomization in K8S.rglob("kustomization.yaml"):
        data = _documents(kustomization)[0]
        for resource in data["resources"]:
            assert (kustomization.parent / resource).exists(), f"{kustomization}: {resource}"


@pytest.mark.parametrize("overlay", OVERLAYS, ids=lambda p: p.name)
def test_every_patch_targets_an_object_of_the_overlay(overlay: Path) -> None:
    # (kustomize applies a patch whose target matches nothing without a word)
    documents = _built(overlay)
    objects = {(d["kind"], d["metadata"]["name"]) for d in documents}
    for patch in _documents(overlay / "kustomization.yaml")[0].get("patches", []):
        target = patch["target"]
        assert (target["kind"], target["name"]) in objects, target


def test_deployment_probes_and_ports_match_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    (deployment,) = _documents(K8S / "base" / "deployment.yaml")
    (config,) = _documents(K8S / "base" / "configmap.yaml")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert config["data"]["GLINTWICK_GRPC"].endswith(f":{ports['grpc']}")
    assert config["data"]["GLINTWICK_HTTP"].endswith(f":{ports['http']}")
    # replicas share Redis, whose URL and password are in a Secret, not the ConfigMap
    assert "GLINTWICK_STORE" not in config["data"]
    env = _env(deployment)
    assert env["GLINTWICK_STORE"]["secretKeyRef"]["key"] == "url"
    assert env["GLINTWICK_STORE_PASSWORD"]["secretKeyRef"]["key"] == "password"
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["grpc"]["port"] == ports["grpc"]
    args = _serve_args(config["data"], monkeypatch)
    assert args.max_connection_age == float(config["data"]["GLINTWICK_MAX_CONNECTION_AGE"])


def test_the_bot_pool_balances_over_the_headless_service_and_has_probes() -> None:
    (bots,) = _documents(K8S / "base" / "bots.yaml")
    services = _documents(K8S / "base" / "service.yaml")
    container = bots["spec"]["template"]["spec"]["containers"][0]
    env = {v["name"]: v.get("value") for v in container["env"]}
    target = env["GLINTWICK_TARGET"]
    assert target.startswith("dns:///")  # every pod's address: calls go round robin
    host, port = target.removeprefix("dns:///").split(":")
    (headless,) = [s for s in services if s["metadata"]["name"] == host]
    assert headless["spec"]["clusterIP"] == "None"
    assert int(port) in [p["port"] for p in headless["spec"]["ports"]]
    health_port = int(env["GLINTWICK_BOT_HEALTH"].rsplit(":", 1)[1])
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    for probe, path in (("livenessProbe", "/livez"), ("readinessProbe", "/readyz")):
        assert container[probe]["httpGet"]["path"] == path
        assert ports[container[probe]["httpGet"]["port"]] == health_port
    from glintwick_cli import build_parser

    assert build_parser().parse_args(["bots", f"--health={env['GLINTWICK_BOT_HEALTH']}"]).health


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


# ------------------------------------------------------------------ helpers


def _matches(selector: Doc, labels: dict[str, str]) -> bool:
    """Whether a label selector (matchLabels / matchExpressions) selects ``labels``."""
    if not all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values")
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and labels.get(key) in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def _has_port(pods: list[tuple[str, dict[str, str], Doc]], port: int | str) -> bool:
    for _, _, pod in pods:
        for container in pod["containers"]:
            declared = container.get("ports", [])
            if any(port in (p.get("name"), p["containerPort"]) for p in declared):
                return True
            if not declared and isinstance(port, int):
                return True  # the operator's pods: ports it declares itself (6379, 26379)
    return False


def _deployment(documents: list[Doc], name: str) -> Doc:
    (deployment,) = [
        d for d in documents if d["kind"] == "Deployment" and d["metadata"]["name"] == name
    ]
    return deployment


def _template_labels(workload: Doc) -> dict[str, str]:
    return dict(workload["spec"]["template"]["metadata"]["labels"])


def _env(deployment: Doc) -> dict[str, Any]:
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    return {v["name"]: v.get("valueFrom", v.get("value")) for v in container.get("env", [])}


def _production_docs() -> str:
    """docs/OPERATIONS.md's section on the production deployment."""
    text = (ROOT / "docs" / "OPERATIONS.md").read_text()
    start = text.index("## Production deployment")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def test_production_acknowledges_a_move_only_once_a_replica_has_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The production overlay's servers run ``--ack replica`` (a failover to the replica
    loses no acknowledged move), with settings the server accepts."""
    (config,) = [
        d
        for d in _built(K8S / "overlays" / "production")
        if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "glintwick"
    ]
    data = config["data"]
    assert data["GLINTWICK_ACK"] == "replica"
    args = _serve_args(data, monkeypatch)
    assert (args.ack, args.ack_replicas) == ("replica", 1)


def _serve_args(data: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """``glintwick serve`` as a container with ``data`` in its environment parses it
    (every flag reads its GLINTWICK_* variable as its default): a key it refuses,
    or a value, fails here as it would fail the pod."""
    from glintwick_cli import build_parser
    from services import config

    known = Path(config.__file__).read_text()  # (each variable is named once there)
    assert not [k for k in data if f'"{k}"' not in known], "a variable no flag reads"
    for key in [k for k in os.environ if k.startswith("GLINTWICK_")]:
        monkeypatch.delenv(key)
    for key, value in data.items():
        monkeypatch.setenv(key, value)
    return build_parser().parse_args(["serve"])
