"""Put the generated protobuf package (gen/) on the venv's import path with a .pth file.

Generated code lives in one place (gen/, made by `make gen`) and is imported as `tafel.<area>.v1`
by every service and test; it is never copied into a service or edited by hand.
"""

import pathlib
import sysconfig

root = pathlib.Path(__file__).resolve().parent.parent
site = pathlib.Path(sysconfig.get_paths()["purelib"])
(site / "tafel-gen.pth").write_text(f"{root / 'gen'}\n")
print(f"gen path -> {site / 'tafel-gen.pth'}")
