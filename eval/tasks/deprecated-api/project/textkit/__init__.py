"""Helpers for a small static blog: slugs, post URLs, file names, tags."""
