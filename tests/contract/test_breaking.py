"""The contract guard: `buf breaking` against the committed baseline passes for protos/ as it is
and fails for a change that would break clients (here a renamed field)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUF = ROOT / ".venv" / "bin" / "buf"
BASELINE = ROOT / "protos" / "baseline.binpb"


def breaking(workdir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BUF), "breaking", "--against", str(BASELINE)], cwd=workdir, capture_output=True, text=True, timeout=60
    )


def test_the_contract_as_it_is_passes_against_the_baseline() -> None:
    result = breaking(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_renamed_field_fails_against_the_baseline(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "protos", tmp_path / "protos", ignore=shutil.ignore_patterns("*.binpb"))
    shutil.copy(ROOT / "buf.yaml", tmp_path / "buf.yaml")
    proto = tmp_path / "protos" / "tafel" / "connect4" / "v1" / "connect4.proto"
    text = proto.read_text()
    assert "uint32 column = 1;" in text
    proto.write_text(text.replace("uint32 column = 1;", "uint32 col = 1;", 1))
    result = breaking(tmp_path)
    assert result.returncode != 0
    assert "column" in result.stdout + result.stderr
