"""The digest example's code step: the edited digest (its bindings, as keyword arguments) → a filing record."""

from __future__ import annotations


def file(title: str, text: str, note: str | None = None) -> dict[str, object]:
    return {"title": title, "words": len(text.split()), "note": note or ""}
