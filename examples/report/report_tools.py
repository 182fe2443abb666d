"""The report example's code step: the written sections, in order → one document."""

from __future__ import annotations


def assemble(input: list[str]) -> str:
    return "\n\n".join(f"{i}. {text}" for i, text in enumerate(input, 1))
