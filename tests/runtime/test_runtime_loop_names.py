"""A loop or map read by name inside its own body (`outer.iteration`, `outer.last.verdict`, `each.index`): what
`loop...`/`map...` gives, so an inner loop can read an outer one."""

from __future__ import annotations

from spec_helpers import run_seeing, write_spec

SPEC = """
plait 0.2
step draft {
  model  = m
  prompt = "outer {{outer.iteration}} inner {{loop.iteration}} last [{{outer.last.verdict}}] item {{each.item}}"
}
loop inner = draft { max_iterations = 2 }
step review {
  model  = m
  prompt = "review {{input}} in round {{outer.iteration}} of {{each.index}}"
  output { verdict: "accept" | "revise" }
}
loop outer = inner -> review { max_iterations = 2, until = verdict == "accept" }
step plan {
  model  = m
  prompt = "plan {{input}}"
  output { items: list[string] }
}
map each = outer { over = input.items, concurrency = 1 }
chain main = plan -> each
"""

REPLIES = [
    {"output": {"items": ["a"]}},
    {"text": "d1"},
    {"text": "d2"},
    {"output": {"verdict": "revise"}},
    {"text": "d3"},
    {"text": "d4"},
    {"output": {"verdict": "accept"}},
]


def test_an_inner_loop_reads_the_outer_loop_and_the_map_by_name(tmp_path):
    result, seen = run_seeing(write_spec(tmp_path, SPEC, REPLIES), "x")
    assert result.error is None and result.output == [{"verdict": "accept"}]
    assert [text for _, text in seen[1:]] == [
        "outer 1 inner 1 last [] item a",
        "outer 1 inner 2 last [] item a",
        "review d2 in round 1 of 0",
        "outer 2 inner 1 last [revise] item a",
        "outer 2 inner 2 last [revise] item a",
        "review d4 in round 2 of 0",
    ]
