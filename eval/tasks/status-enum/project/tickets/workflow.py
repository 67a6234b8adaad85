"""Moving tickets through open -> in_progress -> closed (and back to open)."""

ALLOWED = {
    "open": {"in_progress", "closed"},
    "in_progress": {"open", "closed"},
    "closed": {"open"},
}


def move(ticket, status):
    if status not in ALLOWED:
        raise ValueError(f"unknown status {status!r}")
    if status not in ALLOWED[ticket.status]:
        raise ValueError(f"ticket {ticket.id} cannot go from {ticket.status} to {status}")
    ticket.status = status
    return ticket


def start(ticket):
    return move(ticket, "in_progress")


def close(ticket):
    return move(ticket, "closed")


def reopen(ticket):
    return move(ticket, "open")
