"""File names for posts on disk."""

from textkit import slug


def post_filename(date, title):
    return f"{date}_{slug.make_slug(title, sep='_', max_length=60)}.md"
