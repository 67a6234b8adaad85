"""The mailer's settings, read from an INI file; MAILER_HOST overrides the host."""

import configparser
import os
from dataclasses import dataclass, field

DEFAULT_PATH = "settings.ini"


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
    parser = configparser.ConfigParser()
    if not parser.read(path, encoding="utf-8"):
        raise FileNotFoundError(path)
    server = parser["server"] if parser.has_section("server") else {}
    mail = parser["mail"] if parser.has_section("mail") else {}
    defaults = Settings()
    settings = Settings(
        host=server.get("host", defaults.host),
        port=int(server.get("port", defaults.port)),
        use_tls=parser.getboolean("server", "use_tls", fallback=defaults.use_tls),
        sender=mail.get("sender", defaults.sender),
        retries=int(mail.get("retries", defaults.retries)),
        timeout=float(mail.get("timeout", defaults.timeout)),
        recipients=[r.strip() for r in mail.get("recipients", "").split(",") if r.strip()],
    )
    if os.environ.get("MAILER_HOST"):
        settings.host = os.environ["MAILER_HOST"]
    return settings
