"""The mailer's settings, read from a TOML file; MAILER_HOST overrides the host."""

import os
import tomllib
from dataclasses import dataclass, field

DEFAULT_PATH = "settings.toml"


@dataclass
class Settings:
    host: str = "localhost"
    port: int = 25
    use_tls: bool = False
    sender: str = "mailer@localhost"
    retries: int = 1
    timeout: float = 10.0
    recipients: list = field(default_factory=list)


def load(path=DEFAULT_PATH):
    with open(path, "rb") as handle:
        data = tomllib.load(handle)
    server = data.get("server", {})
    mail = data.get("mail", {})
    defaults = Settings()
    settings = Settings(
        host=server.get("host", defaults.host),
        port=int(server.get("port", defaults.port)),
        use_tls=bool(server.get("use_tls", defaults.use_tls)),
        sender=mail.get("sender", defaults.sender),
        retries=int(mail.get("retries", defaults.retries)),
        timeout=float(mail.get("timeout", defaults.timeout)),
        recipients=list(mail.get("recipients", [])),
    )
    if os.environ.get("MAILER_HOST"):
        settings.host = os.environ["MAILER_HOST"]
    return settings
