"""deploy/ is checked, not just written: every overlay renders and validates against the
Kubernetes schemas, and what it renders has what a production deploy needs (restricted Pod
Security fields, gRPC health probes, resources, disruption budgets, autoscaling, metrics scraping,
autoscaled rules pods the gateway finds by DNS); compose and the Dockerfile pass their checkers; and the
container health check answers from a real server."""

from __future__ import annotations

import copy
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gateway.settings import GatewaySettings
from kit.catalogue import GAMES
from kit.server import LIVENESS
from tests.platforms import ENV
from tools import check_deploy
from tools.platform import Platform

WORKLOADS = {"Deployment", "StatefulSet"}
BASE_ENV = {"REDIS_URL": "redis://127.0.0.1:6379/0", "TAFEL_TOKEN_SECRET": "x" * 16}


@pytest.fixture(scope="module", params=[p.name for p in check_deploy.overlays()])
def rendered(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return check_deploy.render(check_deploy.K8S / "overlays" / request.param)


def named(resources: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["name"]: r for r in resources if r["kind"] == kind}


def test_every_check_passes() -> None:
    done = check_deploy.check_all()
    assert any("overlays/example" in line for line in done), done


def test_the_validator_rejects_a_misspelt_field(rendered: list[dict[str, Any]]) -> None:
    broken = copy.deepcopy(named(rendered, "Deployment")["gateway"])
    broken["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = {}
    with pytest.raises(check_deploy.DeployCheckError, match="readinessProbes"):
        check_deploy.validate([broken], "test")


def test_every_pod_meets_restricted_pod_security_with_probes_and_resources(rendered: list[dict[str, Any]]) -> None:
    workloads = [r for r in rendered if r["kind"] in WORKLOADS]
    assert {w["metadata"]["name"] for w in workloads} == {*GAMES, "gateway", "bot-pool"}
    for workload in workloads:
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        for container in pod["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False and context["capabilities"]["drop"] == ["ALL"]
            assert context["readOnlyRootFilesystem"] is True
            assert {"cpu", "memory"} <= container["resources"]["requests"].keys()
            assert {"cpu", "memory"} <= container["resources"]["limits"].keys()
            if workload["metadata"]["name"] != "bot-pool":  # a client: it serves nothing to probe
                port = next(p["containerPort"] for p in container["ports"] if p["name"] == "grpc")
                for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                    assert container[probe]["grpc"]["port"] == port, (workload["metadata"]["name"], probe)
                annotations = workload["spec"]["template"]["metadata"]["annotations"]
                assert annotations["prometheus.io/scrape"] == "true" and annotations["prometheus.io/port"] == "9100"
    namespace = next(r for r in rendered if r["kind"] == "Namespace")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_the_gateway_finds_autoscaled_rules_pods_through_headless_services(rendered: list[dict[str, Any]]) -> None:
    deployments, services = named(rendered, "Deployment"), named(rendered, "Service")
    autoscalers = named(rendered, "HorizontalPodAutoscaler")
    gateway = deployments["gateway"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in gateway["env"]}
    assert not named(rendered, "StatefulSet")  # rules pods need no stable names any more
    for game in GAMES:
        # The gateway resolves the headless Service's name to every ready pod of the workload.
        service, workload = services[game]["spec"], deployments[game]["spec"]
        assert service["clusterIP"] == "None" and service["publishNotReadyAddresses"] is False
        assert service["selector"].items() <= workload["template"]["metadata"]["labels"].items()
        port = service["ports"][0]["port"]
        assert env[f"TAFEL_RULES_{game.upper()}"] == f"dns:///{game}:{port}", game
        assert GatewaySettings.from_env({**BASE_ENV, f"TAFEL_RULES_{game.upper()}": env[f"TAFEL_RULES_{game.upper()}"]})
    for name in (*GAMES, "gateway"):
        autoscaler = autoscalers[name]["spec"]
        assert autoscaler["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
        assert 2 <= autoscaler["minReplicas"] < autoscaler["maxReplicas"], name
        # The autoscaler owns the count: a `replicas` in the manifest would reset it on every apply.
        assert "replicas" not in deployments[name]["spec"], name
    if "tafel" in named(rendered, "Namespace"):  # the example overlay raised two floors
        assert [autoscalers[name]["spec"]["minReplicas"] for name in ("connect4", "gateway")] == [3, 3]


def test_disruption_budgets_network_policy_and_secret_names(rendered: list[dict[str, Any]]) -> None:
    budgets = named(rendered, "PodDisruptionBudget")
    assert set(budgets) == {*GAMES, "gateway"}
    policy = named(rendered, "NetworkPolicy")["rules-from-gateways-only"]
    assert policy["spec"]["podSelector"] == {"matchLabels": {"tier": "rules"}}
    template = yaml.safe_load((check_deploy.K8S / "secret.template.yaml").read_text())
    keys = {
        e["valueFrom"]["secretKeyRef"]["key"]
        for w in rendered
        if w["kind"] in WORKLOADS
        for e in w["spec"]["template"]["spec"]["containers"][0].get("env", [])
        if "valueFrom" in e
    }
    assert keys == set(template["stringData"]), "every key read is in the Secret template, and no more"


def test_compose_checker_rejects_an_unknown_key(tmp_path: Path) -> None:
    compose = yaml.safe_load((check_deploy.DEPLOY / "compose.yaml").read_text())
    # Every image has a HEALTHCHECK; starts wait on health, and on the layout's migration.
    for dockerfile in check_deploy.DOCKERFILES:
        assert "\nHEALTHCHECK " in (check_deploy.DEPLOY / dockerfile).read_text(), dockerfile
    for name, service in compose["services"].items():
        assert service.get("image") in ("${TAFEL_IMAGE:-tafel:latest}", "${TAFEL_REDIS_IMAGE:-tafel-redis:latest}"), (
            name
        )
        for needed_name, needed in service.get("depends_on", {}).items():
            wanted = "service_completed_successfully" if needed_name == "migrate" else "service_healthy"
            assert needed == {"condition": wanted}, name
        if name not in ("redis", "migrate", "bot-pool"):  # the bot pool waits on the gateway
            assert "migrate" in service["depends_on"], f"{name} may start before the layout is migrated"
    compose["services"]["gateway"]["helthcheck"] = {}
    broken = tmp_path / "compose.yaml"
    broken.write_text(yaml.safe_dump(compose))
    with pytest.raises(check_deploy.DeployCheckError):
        check_deploy.check_compose(broken)


@pytest.fixture(scope="module")
def connect4_and_gateway(redis_url: str) -> Iterator[Platform]:
    running = Platform(redis_url=redis_url, fixed_ports=False, bot_pool=False, games=("connect4",), extra_env=ENV)
    running.start()
    try:
        yield running
    finally:
        running.stop()


def health(port: str, *service: str) -> int:
    script = str(check_deploy.DEPLOY / "healthcheck.py")
    return subprocess.run([sys.executable, script, *service], env={"TAFEL_PORT": port}, timeout=30).returncode


def test_the_probes_and_health_check_ask_what_the_real_servers_serve(
    rendered: list[dict[str, Any]], connect4_and_gateway: Platform
) -> None:
    workloads = named(rendered, "Deployment")
    ports = {
        "connect4": connect4_and_gateway.rules_addresses["connect4"][0].rsplit(":", 1)[1],
        "gateway": connect4_and_gateway.gateway_addresses[0].rsplit(":", 1)[1],
    }
    for name, port in ports.items():
        probe = workloads[name]["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["grpc"]
        assert health(port, probe["service"]) == 0, (name, probe)  # the readiness probe's service
        container = workloads[name]["spec"]["template"]["spec"]["containers"][0]
        for kind in ("livenessProbe", "startupProbe"):  # the process runs, whatever Redis does
            assert container[kind]["grpc"]["service"] == LIVENESS, (name, kind)
            assert health(port, LIVENESS) == 0
        assert health(port) == 0  # the image's HEALTHCHECK: the whole server can do its work
        # The layout is migrated before the server's container starts (docs/migrations.md).
        (init,) = workloads[name]["spec"]["template"]["spec"]["initContainers"]
        assert init["command"][:3] == ["python", "-m", "tools.migrate"] and init["image"] == container["image"]
        assert health(port, "tafel.no.such.Service") == 1
    connect4_and_gateway.kill("connect4-0")
    assert health(ports["connect4"]) == 1
