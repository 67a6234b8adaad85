"""Course grades from a CSV of scores."""
