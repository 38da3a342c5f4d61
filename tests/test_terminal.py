"""Hostile terminals (issue 18, item 6): stored text holding terminal control sequences —
clear screen, window title, an OSC 52 clipboard write, hidden text, a C1 CSI without an
ESC, a right-to-left override, a carriage return that overwrites the line — is printed
escaped by every command, on a terminal or not, while the store keeps it verbatim and
``--json`` output still decodes to the exact text. Session ids refuse the same characters
(the bad-input corpus has one entry per kind)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import akasha_explorer as ak
from akasha_explorer.cli import cli
from akasha_explorer.text.terminal import UNSAFE, terminal_safe

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = {
    "clear": "before \x1b[2J\x1b[H after the screen was cleared",
    "title": "set the title \x1b]0;pwned window\x07 and go on",
    "clipboard": "copy this \x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07 into your clipboard",
    "hidden": "visible \x1b[8m hidden text you cannot see \x1b[0m visible again",
    "c1": "a C1 CSI without ESC \x9b2J and an OSC \x9d0;title\x9c here",
    "bidi": "invoice for \u202etxt.exe the rest",
    "cr": "the first half\r OVERWRITTEN by the second, and a DEL \x7f here",
}
SPEAKER = "Ann\x1b]0;speaker title\x07"


@pytest.fixture(scope="module")
def tty_store(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Path:
    path = tmp_path_factory.mktemp("term") / "store"
    rows = [{"session_id": "tty", "seq": k, "ts": 1_788_000_000 + 60 * k,
             "role": "user" if k % 2 == 0 else "assistant", "speaker": SPEAKER, "text": t}
            for k, t in enumerate(HOSTILE.values())]
    src = path.parent / "tty.jsonl"
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    with ak.open(path) as mem:
        mem.ingest(src, progress=False)
    return path


def _clean(output: str) -> None:
    bad = sorted({f"U+{ord(c):04X}" for c in UNSAFE.findall(output)})
    assert not bad, f"raw control characters printed: {bad}\n{output[:500]!r}"


def test_every_command_prints_stored_text_escaped(tty_store: Path) -> None:
    with ak.open(tty_store, read_only=True) as mem:
        nodes = list(mem.store.mirror.nodes.uid)
    runs = [["show", str(tty_store), n] for n in nodes]
    runs += [["expand", str(tty_store), nodes[0], "--around", "9"],
             ["context", str(tty_store), "clipboard screen title hidden", "--now", "last"],
             ["recall", str(tty_store), "clipboard screen title hidden", "--now", "last"],
             ["explain", str(tty_store), "clipboard", nodes[1], "--now", "last"],
             ["review", "list", str(tty_store), "--status", "all"],
             ["anchors", str(tty_store), "--all"],
             ["health", str(tty_store)], ["stats", str(tty_store)]]
    shown = ""
    for args in runs:
        for color in (False, True):  # off a terminal, and as if on one (colours kept)
            r = CliRunner().invoke(cli, args, color=color)
            assert r.exit_code == 0, (args, r.output)
            _clean(r.output)
            shown += r.output
    for text in HOSTILE.values():  # each shown, escaped
        assert terminal_safe(text) in shown, text
    assert "\\x1b]52;c;" in shown and "\\x9b2J" in shown and "\\u202etxt.exe" in shown
    assert terminal_safe(SPEAKER) in shown


def test_json_output_is_escaped_and_decodes_to_the_exact_text(tty_store: Path) -> None:
    with ak.open(tty_store, read_only=True) as mem:
        nodes = list(mem.store.mirror.nodes.uid)
        stored = {m.uid: m.text for n in nodes for m in mem.messages(n)}
    assert sorted(stored.values()) == sorted(HOSTILE.values())  # the store keeps them verbatim
    seen = {}
    for n in nodes:
        r = CliRunner().invoke(cli, ["show", str(tty_store), n, "--json"])
        assert r.exit_code == 0, r.output
        _clean(r.output)
        seen.update({m["uid"]: m["text"] for m in json.loads(r.output)["messages"]})
    assert seen == stored
    r = CliRunner().invoke(cli, ["recall", str(tty_store), "clipboard", "--now", "last", "--json"])
    assert r.exit_code == 0
    _clean(r.output)
    assert json.loads(r.output)["query"] == "clipboard"


def test_error_messages_and_log_lines_are_escaped(tty_store: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["show", str(tty_store), "tty:0\x1b]0;x\x07"])
    assert r.exit_code == 1
    _clean(r.output)
    assert "no node" in r.output


def test_only_the_cli_kit_prints() -> None:
    """One way out for command output: every ``akasha`` command prints through
    ``cli.kit.echo`` / ``echo_json`` / ``echo_doc``, which escape (no direct click.echo)."""
    offenders = []
    kit = ROOT / "akasha_explorer" / "cli" / "kit.py"
    assert kit.is_file()
    for p in sorted((ROOT / "akasha_explorer").rglob("*.py")):
        if p == kit:
            continue
        for k, line in enumerate(p.read_text("utf-8").splitlines(), 1):
            if re.search(r"\bclick\.(echo|secho)\(", line):
                offenders.append(f"{p.relative_to(ROOT)}:{k}")
    assert offenders == []
