"""A history row → its segment line → the same row read back (log.py): what a process killed before its rows reach
the tables leaves for the next one, whatever text its run id, kind and key hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from plait.runtime.store.base import encode
from plait.runtime.store.log import line, scan

ROWS = [
    ("20261205-071600-abcdef012345", 1, "admit", None, 1796455124.4390357, encode({"entry": "main", "input": "go"})),
    ('run "quoted"\tand tabbed', 2, "model_request", "main#1", 1e16, encode({"digests": ["a1"]})),
    ("r", 3, "tool_intent", 'main#1:call\n"1"\x01 é 中', 0.30000000000000004, encode({"arguments": {"t": "\t"}})),
    ("", 0, "~run", None, 1796455124.5, encode(["r", "main", None, '"go"', 1.0, 1.0])),
]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r[2])
def test_a_line_reads_back_as_the_row_it_was_written_from(tmp_path: Path, row: tuple) -> None:
    path = tmp_path / "1-seg.jsonl"
    path.write_text(line(*row), encoding="utf-8")
    rows, damage = scan(path)
    assert (rows, damage) == ([row], [])
