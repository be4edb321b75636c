"""The SDK's wheel carries the generated modules of the public API (tafel.play.v1, tafel.games.v1,
tafel.admin.v1 and each game's messages).

Why inside this wheel rather than a wheel of their own: protobuf names a Python module after its
proto package, so the generated code must be importable as `tafel.<area>.v1`, beside the SDK's own
`tafel` modules; two distributions that both install `tafel/__init__.py` overwrite and, on
uninstall, delete each other's file. One distribution owning `tafel` also keeps the SDK and the
messages it was written against at one version. The rules service's and diagnostics' internal
protos (tafel.rules.v1, tafel.diagnostics.v1) stay out: no client speaks them.

A checkout keeps the generated code in gen/ (`make gen`), outside this folder, so build_py copies
it into the build; everything else is in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

GENERATED = Path(__file__).resolve().parents[2] / "gen" / "tafel"
PUBLIC_AREAS = ("play", "games", "admin", "connect4", "plus4", "coloursquare")


class BuildWithGenerated(build_py):
    def run(self) -> None:
        super().run()
        for area in PUBLIC_AREAS:
            source = GENERATED / area / "v1"
            if not source.is_dir():
                raise SystemExit(f"{source} is missing: `make gen` generates it")
            target = Path(self.build_lib) / "tafel" / area / "v1"
            target.mkdir(parents=True, exist_ok=True)
            for module in sorted(source.glob("*.py*")):  # the modules and their .pyi stubs
                shutil.copy2(module, target / module.name)


setup(cmdclass={"build_py": BuildWithGenerated})
