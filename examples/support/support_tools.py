"""The support example's python tools: an in-memory order book."""

from __future__ import annotations

ORDERS = {"A-12345": {"item": "kettle", "total": 39.0, "status": "delivered"}}


def find_order(order_id: str) -> dict:
    order = ORDERS.get(order_id)
    if order is None:
        raise KeyError(f"no order {order_id}")
    return {"order_id": order_id, **order}


def refund(order_id: str, amount: float, reason: str = "other") -> str:
    order = find_order(order_id)
    if amount > order["total"]:
        raise ValueError(f"refund {amount} exceeds the order total {order['total']}")
    return f"refunded {amount:.2f} on {order_id} ({reason})"
