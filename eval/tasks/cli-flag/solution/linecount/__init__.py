"""Count the lines of text files."""
