"""The approve example's code step: what its `with` binds (the request's item and amount, the approver's note) → an
order confirmation (an in-memory order book)."""

from __future__ import annotations

ORDERS: list[str] = []


def place_order(item: str, amount: float, note: str | None = None) -> str:
    ORDERS.append(item)
    reference = f"PO-{1000 + len(ORDERS)}"
    return f"Order {reference} placed: {item} for {amount:.2f} EUR." + (f" Approver's note: {note}" if note else "")
