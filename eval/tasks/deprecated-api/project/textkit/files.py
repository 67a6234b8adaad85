"""File names for posts on disk."""

from textkit import slug


def post_filename(date, title):
    return f"{date}_{slug.slugify(title).replace('-', '_')}.md"
