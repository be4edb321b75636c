"""The Makefile's choice of interpreter for a new .venv: the distribution's PGO/LTO build when it can
make a venv (docs/benchmarks.md, "The interpreter, frames a resumption passes, Redis by script"), else python3; PYTHON=... overrides."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tools.platform import ROOT

DISTRO_PYTHON = Path("/usr/bin/python3.11")


def venv_python(*overrides: str) -> str:
    done = subprocess.run(
        ["make", "-s", "--no-print-directory", "venv-python", *overrides],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={key: value for key, value in os.environ.items() if key != "PYTHON"},  # (make reads it too)
    )
    return done.stdout.strip()


def can_make_a_venv(python: Path) -> bool:
    if not python.exists():
        return False
    probe = subprocess.run([str(python), "-c", "import ensurepip, venv"], capture_output=True, timeout=60)
    return probe.returncode == 0


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on PATH")
def test_a_new_venv_is_made_from_the_distributions_python_when_it_can_be() -> None:
    expected = str(DISTRO_PYTHON) if can_make_a_venv(DISTRO_PYTHON) else "python3"
    assert venv_python() == expected


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on PATH")
def test_python_on_the_command_line_chooses_another() -> None:
    assert venv_python("PYTHON=/opt/other/python3.11") == "/opt/other/python3.11"
