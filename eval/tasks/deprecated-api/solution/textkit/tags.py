"""Tags: unique slugs, in the order first seen."""

from textkit.slug import make_slug


def normalize_tags(tags):
    seen = []
    for tag in tags:
        value = make_slug(tag, max_length=60)
        if value and value not in seen:
            seen.append(value)
    return seen
