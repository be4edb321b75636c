"""Every machine reason the code can raise is in the contract's list (docs/architecture.md, "Reasons are enumerated").

The list is protos/tafel/games/v1/reasons.proto (one `//   NAME (WHERE): meaning` line each). The
code is read, not run: every call that builds a refusal or an outcome with a literal (or a module
constant) reason, every reason constant of a rules module (``NAME = "NAME"``), and every id check
(``check_id("game_id", ...)`` raises BAD_GAME_ID). A new reason that is not listed fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIST = ROOT / "protos/tafel/games/v1/reasons.proto"
ENTRY = re.compile(r"^//   ([A-Z][A-Z0-9_]*) \(([A-Za-z_, ]+)\): (\S.*)$")
REASON = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$")
# Calls whose argument at this position (or whose `reason=` keyword) is a machine reason.
REASON_ARG = {
    "Refused": 1,
    "_refused": 1,
    "invalid": 0,
    "IllegalMove": 0,
    "MalformedMessage": 0,
    "permission_denied": 0,
    "precondition": 0,
    "unauthenticated": 0,
    "unavailable": 0,
    "too_many": 0,
    "TournamentError": 0,
    "Outcome": -1,
    "Reconnect": -1,
    "TournamentCancelled": -1,
    "ErrorInfo": -1,
}
# Where the code that refuses lives: the servers, and the pure rules package (whose game modules
# name their illegal-move reasons as constants equal to their value, e.g. COLUMN_FULL = "COLUMN_FULL").
SCANNED = ("services", "gateway", "packages/tafel-rules/tafel_rules")
RULES_PACKAGE = "packages/tafel-rules/tafel_rules"


def listed() -> dict[str, str]:
    entries: dict[str, str] = {}
    for line in LIST.read_text().splitlines():
        match = ENTRY.match(line)
        if match:
            entries[match.group(1)] = match.group(3)
    return entries


def _callee(node: ast.Call) -> str:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return ""


def _constants(tree: ast.Module) -> dict[str, str]:
    out: dict[str, str] = {}
    for node in tree.body:
        target = value = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant) and isinstance(value.value, str):
            out[target.id] = value.value
    return out


def raised() -> dict[str, str]:
    """Reason -> where it is first raised, for every reason the code can produce."""
    trees = {path: ast.parse(path.read_text()) for top in SCANNED for path in (ROOT / top).rglob("*.py")}
    constants: dict[str, set[str]] = {}
    for tree in trees.values():
        for name, value in _constants(tree).items():
            constants.setdefault(name, set()).add(value)
    found: dict[str, str] = {}

    def add(value: object, where: str) -> None:
        if isinstance(value, str) and REASON.match(value):
            found.setdefault(value, where)

    for path, tree in trees.items():
        name = str(path.relative_to(ROOT))
        if path.is_relative_to(ROOT / RULES_PACKAGE):
            for constant, value in _constants(tree).items():
                if constant == value:
                    add(value, name)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            callee = _callee(node)
            where = f"{name}:{node.lineno}"
            if callee == "check_id" and node.args and isinstance(node.args[0], ast.Constant):
                add(f"BAD_{str(node.args[0].value).upper()}", where)
            position = REASON_ARG.get(callee)
            if position is None:
                continue
            args = [k.value for k in node.keywords if k.arg == "reason"]
            if 0 <= position < len(node.args):
                args.append(node.args[position])
            for arg in args:
                if isinstance(arg, ast.Constant):
                    add(arg.value, where)
                elif isinstance(arg, ast.Name):
                    for value in constants.get(arg.id, ()):
                        add(value, where)
    return found


def test_every_raised_reason_is_listed_with_its_meaning() -> None:
    entries = listed()
    missing = {reason: where for reason, where in raised().items() if reason not in entries}
    assert not missing, f"reasons the code raises that {LIST.relative_to(ROOT)} lacks: {missing}"
    assert all(len(meaning) > 10 for meaning in entries.values())


def test_the_scan_sees_every_kind_of_reason() -> None:
    """The scan is not vacuous: a platform refusal, a game's illegal move, a malformed message,
    an outcome, an id check and a factory-made refusal are all found."""
    found = raised()
    for reason in ("REQUEST_ID_REUSED", "COLUMN_FULL", "BAD_DIE", "ALL_REMOVED", "BAD_GAME_ID", "TOKEN_MISSING",
                   "EVENT_ID_OUT_OF_RANGE", "NO_BONUS_DISC", "OPTION_NOT_FOR_SEATS", "TARGET_REACHED"):
        assert reason in found, reason


def test_refusal_messages_never_format_python_reprs() -> None:
    """Messages are for people (docs/architecture.md, "Messages are for people"): no refusal message is built with `!r`
    (quoted Python values, escapes, dataclass and enum reprs)."""
    offenders = []
    for top in SCANNED:
        for path in (ROOT / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.Call) or _callee(node) not in REASON_ARG:
                    continue
                for arg in (*node.args, *(k.value for k in node.keywords)):
                    for part in ast.walk(arg):
                        if isinstance(part, ast.FormattedValue) and part.conversion == ord("r"):
                            offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders
