"""Put the generated protobuf package (gen/) and the SDK (clients/python) on the venv's import
path with a .pth file.

The SDK's regular `tafel` package extends its __path__ over gen/tafel, so `tafel.play.v1` (generated)
and `tafel.bots` (SDK) import side by side. A path entry is used rather than an editable install
because an editable finder runs after the path finder, which would settle for gen/'s namespace.

Generated code lives in one place (gen/, made by `make gen`) and is imported as `tafel.<area>.v1`
by every service and test; it is never copied into a service or edited by hand.
"""

import pathlib
import sysconfig

root = pathlib.Path(__file__).resolve().parent.parent
site = pathlib.Path(sysconfig.get_paths()["purelib"])
paths = (root / "gen", root / "clients" / "python", root / "clients" / "loadgen")
(site / "tafel-gen.pth").write_text("".join(f"{path}\n" for path in paths))
print(f"gen path -> {site / 'tafel-gen.pth'}")
