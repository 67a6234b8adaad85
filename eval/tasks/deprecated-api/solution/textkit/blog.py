"""Post URLs."""

from textkit.slug import make_slug


def post_url(date, title, base="/blog"):
    return f"{base}/{date[:4]}/{make_slug(title, max_length=60)}/"
