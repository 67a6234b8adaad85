"""Tickets in a JSON file: a list of {"id", "title", "status"}."""

import json

from tickets.models import Ticket

STATUSES = ("open", "in_progress", "closed")


def load(path):
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    tickets = []
    for item in data:
        if item["status"] not in STATUSES:
            raise ValueError(f"ticket {item['id']}: unknown status {item['status']!r}")
        tickets.append(Ticket(item["id"], item["title"], item["status"]))
    return tickets


def save(path, tickets):
    data = [{"id": t.id, "title": t.title, "status": t.status} for t in tickets]
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")
