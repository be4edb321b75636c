"""Client tests import the `tafel` SDK package from clients/python (also installed into the venv by
`make install`; this keeps a bare checkout working too)."""

from __future__ import annotations

import sys
from pathlib import Path

_CLIENTS = Path(__file__).resolve().parents[2] / "clients" / "python"
if str(_CLIENTS) not in sys.path:
    sys.path.insert(0, str(_CLIENTS))
    _tafel = sys.modules.get("tafel")
    if _tafel is not None and str(_CLIENTS / "tafel") not in list(_tafel.__path__):
        # `tafel` was already imported as the generated code's namespace: add the SDK's directory
        _tafel.__path__.append(str(_CLIENTS / "tafel"))

from tests.platforms import platform_fixture  # noqa: E402

platform = platform_fixture()  # the whole platform, per module

__all__ = ["platform"]
