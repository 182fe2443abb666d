"""The approve example's code step: an approved answer → an order confirmation (an in-memory order book)."""

from __future__ import annotations

ORDERS: list[str] = []


def place_order(decision: str, note: str | None = None) -> str:
    ORDERS.append(note or "")
    reference = f"PO-{1000 + len(ORDERS)}"
    return f"Order {reference} placed." + (f" Approver's note: {note}" if note else "")
