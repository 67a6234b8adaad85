"""How many tickets are in each status."""

from tickets.status import Status


def counts(tickets):
    result = {status: 0 for status in Status}
    for ticket in tickets:
        result[ticket.status] += 1
    return result


def summary(tickets):
    lines = [f"{status.value}: {count}" for status, count in counts(tickets).items()]
    open_titles = [t.title for t in tickets if t.status is not Status.CLOSED]
    lines.append("to do: " + (", ".join(open_titles) or "nothing"))
    return "\n".join(lines)
