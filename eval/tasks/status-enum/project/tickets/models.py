"""Tickets."""

from dataclasses import dataclass


@dataclass
class Ticket:
    id: int
    title: str
    status: str = "open"

    @property
    def is_done(self):
        return self.status == "closed"
