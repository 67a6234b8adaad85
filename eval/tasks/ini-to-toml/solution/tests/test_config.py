from mailer.config import Settings, load

FULL = """
[server]
host = "mail.test"
port = 2525
use_tls = true

[mail]
sender = "a@test"
retries = 5
timeout = 1.5
recipients = ["x@test", "y@test"]
"""


def test_load_reads_every_setting(tmp_path):
    path = tmp_path / "settings.toml"
    path.write_text(FULL)
    assert load(str(path)) == Settings("mail.test", 2525, True, "a@test", 5, 1.5, ["x@test", "y@test"])


def test_missing_settings_have_defaults(tmp_path):
    path = tmp_path / "settings.toml"
    path.write_text('[server]\nhost = "only.host"\n')
    assert load(str(path)) == Settings(host="only.host")


def test_environment_overrides_the_host(tmp_path, monkeypatch):
    path = tmp_path / "settings.toml"
    path.write_text(FULL)
    monkeypatch.setenv("MAILER_HOST", "override.test")
    assert load(str(path)).host == "override.test"
