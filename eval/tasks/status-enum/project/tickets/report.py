"""How many tickets are in each status."""


def counts(tickets):
    result = {"open": 0, "in_progress": 0, "closed": 0}
    for ticket in tickets:
        result[ticket.status] += 1
    return result


def summary(tickets):
    lines = [f"{status}: {count}" for status, count in counts(tickets).items()]
    open_titles = [t.title for t in tickets if t.status != "closed"]
    lines.append("to do: " + (", ".join(open_titles) or "nothing"))
    return "\n".join(lines)
