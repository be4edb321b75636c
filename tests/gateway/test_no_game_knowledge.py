"""The gateway knows no game: no catalogued game's name appears in its code (names, attributes,
string literals), only in comments and docstrings. Seat ranges, options, rating pools and boards
come from each rules service's DescribeGame (gateway/catalogue.py), so a new game is a new rules
service and a line in kit/catalogue.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from kit.catalogue import GAMES

GATEWAY = Path(__file__).resolve().parents[2] / "gateway"


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def game_names_in(source: str) -> list[tuple[int, str]]:
    """(line, word) for every catalogued game's name in the code of `source`."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, GAMES)) + r")\b", re.IGNORECASE)
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        words: list[str] = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            words = [node.value]
        elif isinstance(node, ast.Name):
            words = [node.id]
        elif isinstance(node, ast.Attribute):
            words = [node.attr]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            words = [node.name]
        elif isinstance(node, ast.alias):
            words = [node.name]
        for word in words:
            for match in pattern.finditer(word):
                found.append((getattr(node, "lineno", 0), match.group(0)))
    return found


def test_the_check_sees_a_game_in_code_but_not_in_comments() -> None:
    game = next(iter(GAMES))
    assert game_names_in(f'"""About {game}."""\n# {game}\nx = 1\n') == []
    assert game_names_in(f'if record.game == "{game}":\n    pass\n') == [(1, game)]
    assert game_names_in(f"sheet = record.options.{game}.side\n") == [(1, game)]


def test_no_gateway_module_names_a_game() -> None:
    offenders = [
        f"{path.relative_to(GATEWAY.parent)}:{line}: {word}"
        for path in sorted(GATEWAY.rglob("*.py"))
        for line, word in game_names_in(path.read_text())
    ]
    assert offenders == [], "the gateway must read game knowledge from DescribeGame:\n" + "\n".join(offenders)
