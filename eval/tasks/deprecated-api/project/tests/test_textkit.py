from textkit.blog import post_url
from textkit.files import post_filename
from textkit.slug import slugify
from textkit.tags import normalize_tags


def test_slugify():
    assert slugify("Héllo, World!") == "hello-world"


def test_post_url():
    assert post_url("2024-05-01", "Why Slugs?") == "/blog/2024/why-slugs/"


def test_post_filename():
    assert post_filename("2024-05-01", "Why Slugs?") == "2024-05-01_why_slugs.md"


def test_tags():
    assert normalize_tags(["Python", "python!", "Café Culture", "  "]) == ["python", "cafe-culture"]
