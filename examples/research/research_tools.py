"""The research example's one python tool (the others are HTTP calls)."""

from __future__ import annotations


def give_up(reason: str) -> str:
    return f"No digest this week: {reason}"
