"""slugify() is gone; every caller uses make_slug with the same results and no warning."""

import warnings

from plansight.eval.checkfixtures import identifiers

LONG = "A Very Long Title That Goes On And On About Slugs, Separators And Limits"
LONG_SLUG = "a-very-long-title-that-goes-on-and-on-about-slugs-separators"
TAG = "An Absurdly Long Tag Name Made Of Many Many Words For Testing Limits"


def test_slugify_is_removed(project):
    slug = project.module("textkit.slug")
    assert not hasattr(slug, "slugify")
    assert slug.make_slug("Héllo, World!") == "hello-world"
    assert slug.make_slug(LONG, max_length=60) == LONG_SLUG


def test_nothing_uses_slugify(project):
    for path in project.tree("**/*.py"):
        assert "slugify" not in set(identifiers(project.syntax(path))), f"{path} uses slugify"


def test_results_are_unchanged_and_silent(project):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        blog = project.module("textkit.blog")
        files = project.module("textkit.files")
        tags = project.module("textkit.tags")
        assert blog.post_url("2024-06-02", LONG) == f"/blog/2024/{LONG_SLUG}/"
        assert blog.post_url("2024-06-02", "Hi!", base="") == "/2024/hi/"
        assert files.post_filename("2024-06-02", LONG) == (
            f"2024-06-02_{LONG_SLUG.replace('-', '_')}.md"
        )
        assert tags.normalize_tags([TAG, "x", "X!", "", TAG.lower()]) == [
            "an-absurdly-long-tag-name-made-of-many-many-words-for-testin",
            "x",
        ]


def test_cli_output_is_unchanged(project):
    result = project.run(
        "-W", "error::DeprecationWarning", "-m", "textkit.cli", "2024-06-02", LONG, "Py", "Café"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"/blog/2024/{LONG_SLUG}/\n"
        f"2024-06-02_{LONG_SLUG.replace('-', '_')}.md\n"
        "py, cafe\n"
    )
    assert "Deprecat" not in result.stderr


def test_project_tests_pass_without_deprecation_warnings(project):
    run = project.pytest("-W", "error::DeprecationWarning")
    assert run.ok, run.output
    assert run.passed >= 4
