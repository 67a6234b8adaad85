"""Sum the amounts of CSV files by category."""
