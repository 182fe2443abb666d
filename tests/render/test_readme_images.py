"""The pictures the README shows → what `plait render` draws today: each `docs/images/NAME.svg` is byte for byte
the golden of `examples/NAME/NAME.plait` (which test_render_goldens holds to the renderer), so a change to how
graphs are drawn cannot leave the README showing an older drawing."""

from __future__ import annotations

import re

from render_helpers import GOLDENS, ROOT

IMAGES = ROOT / "docs" / "images"


def _shown() -> list[str]:
    """The docs/images files README.md and docs/*.md show."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return sorted({m for p in pages for m in re.findall(r"\]\((?:\.\./)?(?:docs/)?images/([\w.-]+)\)", p.read_text())})


def test_every_picture_the_docs_show_is_an_examples_drawing_as_plait_render_draws_it_today():
    shown = _shown()
    assert "briefing.svg" in shown and "triage.svg" in shown, shown
    for name in shown:
        stem = name.removesuffix(".svg")
        golden = GOLDENS / "examples" / stem / name
        assert golden.is_file(), f"docs/images/{name} is not the drawing of an example (no {golden.name} golden)"
        assert (IMAGES / name).read_bytes() == golden.read_bytes(), (
            f"docs/images/{name} is an older drawing: plait render examples/{stem}/{stem}.plait -o docs/images/{name}"
        )
