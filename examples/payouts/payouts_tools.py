"""The payouts example's python: the payment tool, and the check of a payout note."""


def pay(to: str, amount: float) -> str:
    # A real spec would call the bank here; the example only says what it would do.
    return f"paid {amount:g} EUR to {to}"


def one_line(note: str) -> str | None:
    """A payout note is one line that names an amount: else the reason, which the model reads before it retries."""
    if "\n" in note.strip():
        return "write one line only"
    if "EUR" not in note:
        return "name the amount in EUR"
    return None


def summary(answer: str) -> str | None:
    """The payer's last answer is what the finance team reads: it must say something."""
    return None if answer.strip() else "say what was paid and what was not"
