"""The clients know a game only in its own modules (docs/new-game.md): the Python SDK and terminal
in tafel/by_game/<game>.py (and its bot in tafel/bots/), the web app in src/games/<game>.ts and
src/boards/<game>.ts. Anywhere else a game's name in code (a string, an identifier, an import) is
a per-game branch a new game would have to find and extend. Prose may name a game: docstrings and
comments are not read. The games' names come from the contract (GameMove's fields), so a new game
is checked without touching this test.

Not yet shaped by game, and so outside this check for now: the conformance scenarios
(tafel/conformance/), the TypeScript SDK's move helpers (clients/typescript) and the load generator
(clients/loadgen)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tafel.games.v1 import games_pb2

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / "clients" / "python" / "tafel"
WEB = ROOT / "clients" / "web" / "src"
GAMES = tuple(field.name for field in games_pb2.GameMove.DESCRIPTOR.oneofs_by_name["game"].fields)
# Where a game is allowed by name: its own modules (and, for the registries, their index).
PYTHON_ALLOWED = ("by_game/", "bots/", "conformance/", "locale/")
WEB_ALLOWED = ("games/", "boards/")


def _named(text: str) -> list[str]:
    lowered = text.lower()
    return [game for game in GAMES if game in lowered]


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (prose)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def python_mentions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    prose = _docstrings(tree)
    out: list[str] = []
    for node in ast.walk(tree):
        words: list[str] = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            words.append(node.value)
        elif isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.ImportFrom):
            words.append(node.module or "")
            words.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            words.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            words.append(node.name)
        for word in words:
            out.extend(f"line {getattr(node, 'lineno', '?')}: {game} in {word!r}" for game in _named(word))
    return out


_TS_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)


def typescript_mentions(path: Path) -> list[str]:
    out: list[str] = []
    for number, line in enumerate(_TS_COMMENT.sub("", path.read_text()).splitlines(), start=1):
        out.extend(f"line {number}: {game} in {line.strip()!r}" for game in _named(line))
    return out


def test_the_games_come_from_the_contract() -> None:
    assert len(GAMES) >= 3


def test_the_python_client_names_a_game_only_in_its_modules() -> None:
    found: list[str] = []
    for path in sorted(PYTHON.rglob("*.py")):
        relative = path.relative_to(PYTHON).as_posix()
        if relative.startswith(PYTHON_ALLOWED):
            continue
        found.extend(f"tafel/{relative} {hit}" for hit in python_mentions(path))
    assert not found, "a game named outside its modules (tafel/by_game/):\n" + "\n".join(found)


def test_the_web_app_names_a_game_only_in_its_modules() -> None:
    found: list[str] = []
    for path in sorted(WEB.rglob("*.ts")):
        relative = path.relative_to(WEB).as_posix()
        if relative.startswith(WEB_ALLOWED):
            continue
        found.extend(f"src/{relative} {hit}" for hit in typescript_mentions(path))
    assert not found, "a game named outside its modules (src/games/, src/boards/):\n" + "\n".join(found)


def test_the_check_sees_a_branch_and_ignores_prose() -> None:
    """The scanner itself: a branch on a game's name is found; a docstring or comment is not."""
    game = GAMES[0]
    source = f'"""Prose about {game}."""\nif kind == "{game}":\n    pass\n'
    tree = ast.parse(source)
    prose = _docstrings(tree)
    constants = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and id(n) not in prose]
    assert constants == [game]
    assert _named(_TS_COMMENT.sub("", f"// {game}\nconst x = 1; /* {game} */")) == []
