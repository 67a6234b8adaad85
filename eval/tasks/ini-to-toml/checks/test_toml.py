"""settings.ini became settings.toml, read with tomllib, same values, defaults and override."""

import ast
import tomllib

EXPECTED = {
    "server": {"host": "smtp.example.org", "port": 587, "use_tls": True},
    "mail": {
        "sender": "noreply@example.org",
        "retries": 3,
        "timeout": 2.5,
        "recipients": ["ops@example.org", "dev@example.org"],
    },
}
SHOWN = (
    "server smtp.example.org:587 with TLS\n"
    "from noreply@example.org, 3 retries, timeout 2.5 s\n"
    "to ops@example.org, dev@example.org\n"
)


def fields(settings):
    names = ("host", "port", "use_tls", "sender", "retries", "timeout", "recipients")
    return {name: getattr(settings, name) for name in names}


def test_settings_file_is_converted_with_toml_types(project):
    assert not project.exists("settings.ini"), "settings.ini is still there"
    with open(project.file("settings.toml"), "rb") as handle:
        assert tomllib.load(handle) == EXPECTED


def test_config_reads_toml_not_ini(project):
    imported = set()
    for node in ast.walk(project.syntax("mailer/config.py")):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    assert "configparser" not in imported
    assert "tomllib" in imported


def test_load_gives_typed_values(project, tmp_path, monkeypatch):
    monkeypatch.delenv("MAILER_HOST", raising=False)
    path = tmp_path / "custom.toml"
    path.write_text(
        '[server]\nhost = "h.test"\nport = 465\nuse_tls = false\n'
        '[mail]\nretries = 0\nrecipients = ["a@test"]\n',
        encoding="utf-8",
    )
    settings = project.module("mailer.config").load(str(path))
    assert fields(settings) == {
        "host": "h.test",
        "port": 465,
        "use_tls": False,
        "sender": "mailer@localhost",
        "retries": 0,
        "timeout": 10.0,
        "recipients": ["a@test"],
    }


def test_defaults_and_override(project, tmp_path, monkeypatch):
    path = tmp_path / "empty.toml"
    path.write_text("", encoding="utf-8")
    config = project.module("mailer.config")
    monkeypatch.delenv("MAILER_HOST", raising=False)
    assert fields(config.load(str(path))) == {
        "host": "localhost",
        "port": 25,
        "use_tls": False,
        "sender": "mailer@localhost",
        "retries": 1,
        "timeout": 10.0,
        "recipients": [],
    }
    monkeypatch.setenv("MAILER_HOST", "env.test")
    assert config.load(str(path)).host == "env.test"


def test_cli_reads_settings_toml_by_default(project):
    result = project.run("-m", "mailer.cli", env={"MAILER_HOST": ""})
    assert result.returncode == 0, result.stderr
    assert result.stdout == SHOWN


def test_readme_describes_the_toml_file(project):
    readme = project.read("README.md")
    assert "settings.toml" in readme and "settings.ini" not in readme
    assert '"smtp.example.org"' in readme or "'smtp.example.org'" in readme


def test_project_tests_pass(project):
    run = project.pytest()
    assert run.ok, run.output
    assert run.passed >= 3
