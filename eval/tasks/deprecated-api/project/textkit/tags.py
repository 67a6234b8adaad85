"""Tags: unique slugs, in the order first seen."""

from textkit.slug import slugify as to_slug


def normalize_tags(tags):
    seen = []
    for tag in tags:
        value = to_slug(tag)
        if value and value not in seen:
            seen.append(value)
    return seen
