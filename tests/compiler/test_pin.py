"""compiler/pin.py: the sources a run is pinned to compile again as they were (imports included, whatever the disk
says now), and which spec edits can affect the part of a run not yet run."""

from __future__ import annotations

from pathlib import Path

from plait.compiler.diff import diff_graphs
from plait.compiler.pin import affecting, compile_pinned, pin_of
from plait.compiler.pipeline import compile_spec

MAIN = """plait 0.2
import "parts.plait"

step first {
  model = demo
  prompt = "First {{input}}"
}

step again {
  model = demo
  prompt = "Again {{input}}"
  output { verdict: "yes" | "no" }
}

loop redo = again { until = verdict == "yes", max_iterations = 3 }

step other {
  model = demo
  prompt = "Not on main's way"
}

chain main = first -> redo -> last
"""

PARTS = """plait 0.2
model demo = "openai/gpt-4o-mini"

step last {
  model = demo
  prompt = "Last {{input}}"
}
"""


def write(folder: Path, main: str = MAIN, parts: str = PARTS) -> Path:
    (folder / "spec.plait").write_text(main)
    (folder / "parts.plait").write_text(parts)
    return folder / "spec.plait"


def pinned(folder: Path, main: str = MAIN, parts: str = PARTS):
    spec = write(folder, main, parts)
    result = compile_spec(spec)
    assert result.ok, result.diagnostics
    return result, pin_of(result.sources, spec)


def test_a_pinned_spec_compiles_as_it_was_whatever_its_files_say_now(tmp_path):
    result, (digest, form) = pinned(tmp_path)
    write(tmp_path, MAIN.replace("First", "Initial"), PARTS.replace("Last", "Final"))  # both files edited since
    again = compile_pinned(form, tmp_path)
    assert again is not None and again.graph is not None
    assert diff_graphs(result.graph, again.graph) == []
    assert pin_of(again.sources, tmp_path / "spec.plait")[0] == digest
    assert compile_pinned("not a pinned form", tmp_path) is None


def changes(tmp_path, main: str, parts: str = PARTS):
    """(changes, old graph, new graph) from MAIN and PARTS to `main` and `parts`."""
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    old, _ = pinned(tmp_path / "old")
    new, _ = pinned(tmp_path / "new", main, parts)
    return diff_graphs(old.graph, new.graph), old.graph, new.graph


def test_an_edit_to_what_finished_or_what_the_entry_never_reaches_cannot_affect_the_rest(tmp_path):
    edit = MAIN.replace("First {{input}}", "First, {{input}}").replace("Not on main's way", "Still not")
    found, old, new = changes(tmp_path, edit)
    assert len(found) == 2
    # Stopped in `last`: `first` and the loop finished.
    assert affecting(found, old, new, "main", {"main", "first", "redo", "again", "last"}, {"main", "last"}) == []
    # Stopped before `first` ran: the edit is to what is still to run.
    [left] = affecting(found, old, new, "main", {"main"}, {"main"})
    assert left.subject == "first"


def test_a_loop_where_the_run_stands_runs_its_body_again(tmp_path):
    found, old, new = changes(tmp_path, MAIN.replace("Again {{input}}", "Again, {{input}}"))
    [left] = affecting(found, old, new, "main", {"main", "first", "redo", "again"}, {"main", "redo"})
    assert left.subject == "again"
    assert affecting(found, old, new, "main", {"main", "first", "redo", "again"}, {"main", "last"}) == []


def test_a_contract_change_to_what_finished_can_affect_the_rest(tmp_path):
    found, old, new = changes(tmp_path, MAIN.replace('"yes" | "no"', '"yes" | "no" | "maybe"'))
    left = affecting(found, old, new, "main", {"main", "first", "redo", "again", "last"}, {"main", "last"})
    assert [(c.subject, c.what) for c in left] == [("again", "contract"), ("redo", "contract")]


def test_a_model_is_finished_when_every_runnable_using_it_is(tmp_path):
    found, old, new = changes(
        tmp_path, MAIN, PARTS.replace('"openai/gpt-4o-mini"', '"openai/gpt-4o-mini" { temperature = 0 }')
    )
    assert [c.subject for c in found] == ["demo"]
    assert affecting(found, old, new, "main", {"main", "first", "redo", "again", "last", "demo"}, set()) == []
    assert [c.subject for c in affecting(found, old, new, "main", {"main", "first"}, {"main", "redo"})] == ["demo"]
