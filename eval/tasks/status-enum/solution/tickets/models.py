"""Tickets."""

from dataclasses import dataclass

from tickets.status import Status


@dataclass
class Ticket:
    id: int
    title: str
    status: Status = Status.OPEN

    @property
    def is_done(self):
        return self.status is Status.CLOSED
