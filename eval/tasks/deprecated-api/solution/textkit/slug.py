"""Slugs: lower-case ASCII words joined by a separator."""

import re
import unicodedata


def make_slug(text, sep="-", max_length=None):
    """'Héllo, World!' -> 'hello-world'; cut to max_length without a trailing separator."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = sep.join(re.findall(r"[a-z0-9]+", ascii_text.lower()))
    if max_length is not None:
        slug = slug[:max_length].rstrip(sep)
    return slug

