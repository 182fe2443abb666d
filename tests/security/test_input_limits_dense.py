"""The densest inputs under the 8 MiB cap check in a child process under RLIMIT_AS (1 GiB, the issue's bound).

Beside test_input_limits.py (the shapes an issue named) so a second test worker takes these: each is a check of
several megabytes. The ones here are the worst found per stage: three AST nodes in four bytes (`a=1,`, 1.7 GB
while every span kept seven positions), an agent per line just under the reference limit (the most every pass
after the parser holds), and one agent a chain uses 1.6 million times (past the limit: P009; 1.6 GB before it).
"""

from __future__ import annotations

import pytest
from test_input_limits import MEMORY, _peak_rss, hostile

from plait.compiler.passes.resolve_names import MAX_REFERENCES
from plait.dsl.loader import MAX_FILE_BYTES


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "size"),
    [
        ("attributes", 7_900_000),  # 2M attributes: 1,675 MB before spans were three slots, ~910 MB after
        ("agents", 6_650_000),  # 241,000 agents, one use of a name each: under MAX_REFERENCES, ~780 MB
        ("chain", 7_900_000),  # 1.6M uses of one agent: P009, ~330 MB
    ],
)
def test_check_of_a_dense_input_under_the_cap_stays_under_a_gibibyte(kind, size, tmp_path):
    path = tmp_path / "spec.plait"
    path.write_text(hostile(kind, size))
    assert path.stat().st_size < MAX_FILE_BYTES
    assert _peak_rss(path) < MEMORY


def test_the_agents_case_is_checked_whole_under_the_reference_limit():
    # ... and so is the worst of its kind: every pass runs on it (past the limit, naming would stop the check).
    text = hostile("agents", 6_650_000)
    assert MAX_REFERENCES * 0.9 < text.count("model = m") < MAX_REFERENCES
