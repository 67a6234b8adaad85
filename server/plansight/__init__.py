"""Plansight: a coding agent that lives in the editor and plans in the open."""

__version__ = "0.1.0"
