"""Moving tickets through open -> in_progress -> closed (and back to open)."""

from tickets.status import Status

ALLOWED = {
    Status.OPEN: {Status.IN_PROGRESS, Status.CLOSED},
    Status.IN_PROGRESS: {Status.OPEN, Status.CLOSED},
    Status.CLOSED: {Status.OPEN},
}


def move(ticket, status):
    if not isinstance(status, Status):
        raise ValueError(f"unknown status {status!r}")
    if status not in ALLOWED[ticket.status]:
        raise ValueError(
            f"ticket {ticket.id} cannot go from {ticket.status.value} to {status.value}"
        )
    ticket.status = status
    return ticket


def start(ticket):
    return move(ticket, Status.IN_PROGRESS)


def close(ticket):
    return move(ticket, Status.CLOSED)


def reopen(ticket):
    return move(ticket, Status.OPEN)
