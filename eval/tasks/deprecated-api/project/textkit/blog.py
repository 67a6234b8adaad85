"""Post URLs."""

from textkit.slug import slugify


def post_url(date, title, base="/blog"):
    return f"{base}/{date[:4]}/{slugify(title)}/"
