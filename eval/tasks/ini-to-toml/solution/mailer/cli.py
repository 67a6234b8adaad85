"""python -m mailer.cli [--config PATH]: show the settings in effect."""

import argparse

from mailer.config import DEFAULT_PATH, load


def main(argv=None):
    parser = argparse.ArgumentParser(prog="mailer")
    parser.add_argument("--config", default=DEFAULT_PATH)
    args = parser.parse_args(argv)
    settings = load(args.config)
    tls = "with TLS" if settings.use_tls else "without TLS"
    print(f"server {settings.host}:{settings.port} {tls}")
    print(f"from {settings.sender}, {settings.retries} retries, timeout {settings.timeout:g} s")
    print("to " + (", ".join(settings.recipients) or "nobody"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
