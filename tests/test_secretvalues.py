"""The secret values' rules (workspace/secretvalues.py): which values a protected file holds,
and how every occurrence of one, or of its base64 forms, is withheld."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from plansight.workspace.secrets import ProtectedPaths
from plansight.workspace.secretvalues import (
    KnownSecret,
    Redactor,
    SecretValues,
    base64_forms,
    env_values,
    secret_looking,
    values_in_text,
    withheld,
)

TOKEN = "Xk29dLq0aPz7Tn3uVb8wQ4rS"  # 24 random-looking characters
KEY_BODY = [
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7o4qne60TB3wo",
    "pUyGGvJHOaNqmdMSRIMqqMAzTmJMkrYY4nCnDBDt2Nq0ETHt0dW0HnzNLbqMGC5b",
    "Qv2c1Xkz8Aw==",
]
PEM = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(KEY_BODY) + "\n-----END PRIVATE KEY-----\n"


def values(text: str) -> set[str]:
    return {secret.value for secret in values_in_text(text, ".env")}


def test_a_secret_named_field_is_a_secret_from_6_characters() -> None:
    found = values(
        "API_KEY=abc123\nDB_PASSWORD=short\nexport GITHUB_TOKEN='tok_12'\nMY_SECRET: s3cr3t!x\n"
    )
    assert found == {"abc123", "tok_12", "s3cr3t!x"}  # "short" has 5 characters


def test_a_secret_named_json_field_is_a_secret_as_shown_and_decoded() -> None:
    found = values('{"client_secret": "a\\"quoted\\"", "name": "app"}')
    assert {'a\\"quoted\\"', 'a"quoted"'} <= found
    assert "app" not in found


def test_a_long_value_is_a_secret_whatever_its_name() -> None:
    assert values(f"RANDOM={TOKEN}\nother: {TOKEN[::-1]}\n") == {TOKEN, TOKEN[::-1]}


@pytest.mark.parametrize(
    "value",
    [
        "a plain sentence of words",
        "production_database_name",
        "HTTPSConnectionPoolManager",
        "XMLHttpRequestUploadEvents",
        "PRODUCTION_DATABASE_NAME",
        "my-app-production-server",
        "12345678901234567890",
        "3.14159265358979",
        "/usr/local/share/something/deep",
        "~/projects/thing/config",
        "src/components/widget/index.tsx",
        "db.internal.example.com",
        "api.example.com:8443",
        "https://api.example.com/v1/things?page=2",
        "short1x",
    ],
)
def test_plain_words_numbers_paths_and_host_names_are_not_secrets(value: str) -> None:
    assert not secret_looking(value)
    assert values(f"SETTING={value}\n") == set()


@pytest.mark.parametrize(
    "value",
    [
        TOKEN,
        "123e4567-e89b-12d3-a456-426614174000",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        # A random token without a digit: test_hostile_secrets' canary that reached the model
        # once in a CI run (letters only counted as a word).
        "AtvaWMVqazYWckzhijatFBEiZUTjWpfRKXBJbihU",
    ],
)
def test_long_random_looking_values_are_secrets(value: str) -> None:
    assert secret_looking(value)


def test_a_url_password_is_a_secret() -> None:
    found = values("DATABASE_URL=postgres://admin:pw4db0@db:5432/app\n")
    assert "pw4db0" in found


def test_the_body_lines_of_a_private_key_are_secrets() -> None:
    assert set(KEY_BODY) <= values(PEM)
    # A service account's key, its newlines escaped inside JSON.
    escaped = PEM.replace("\n", "\\n")
    assert set(KEY_BODY) <= values(f'{{"type": "x", "private_key": "{escaped}"}}')


def test_the_servers_own_secret_variables_are_secrets_from_6_characters() -> None:
    found = env_values({"ANTHROPIC_API_KEY": "sk-ant-123", "HOME": "/root", "MY_TOKEN": "12345"})
    assert [secret.value for secret in found] == ["sk-ant-123"]
    assert found[0].where == "the server's environment ($ANTHROPIC_API_KEY)"


def redactor(*secrets: str, where: str = ".env") -> Redactor:
    return Redactor([KnownSecret(value, where) for value in secrets])


def test_every_occurrence_is_withheld_naming_where_it_is_from() -> None:
    text = f"a {TOKEN} b\n{TOKEN}{TOKEN}\nend"
    out = redactor(TOKEN).redact(text)
    assert TOKEN not in out
    assert out == f"a {withheld('.env')} b\n{withheld('.env')}\nend"  # adjacent: one mark


def test_text_without_a_known_value_is_returned_as_is() -> None:
    text = "nothing to see here " * 100
    assert redactor(TOKEN).redact(text) is text
    assert Redactor([]).redact(text) is text


@pytest.mark.parametrize("prefix", [b"", b"x", b"xy", b"KEY=", b"hello\nKEY="])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_a_values_base64_forms_are_withheld_at_every_alignment(
    prefix: bytes, encode: object
) -> None:
    value = "p4ss>w?rd~~"  # bytes whose base64 holds + and / (- and _ when URL-safe)
    blob = encode(prefix + value.encode() + b"\nmore after it")  # type: ignore[operator]
    out = redactor(value).redact(f"output: {blob.decode()} end")
    assert withheld(".env") in out
    for form in base64_forms(value):
        assert form not in out


def test_base64_forms_hold_only_the_values_own_bits() -> None:
    value = "abcdefgh"
    forms = base64_forms(value)
    for shift in range(3):
        for before in (b"\0", b"\xff"):
            for after in (b"\0", b"\xff"):
                encoded = base64.b64encode(before * shift + value.encode() + after).decode()
                assert any(form in encoded for form in forms), (shift, before, after)


def test_overlapping_values_are_withheld_whole() -> None:
    first = "AAAAQQQQ1111zzzz"
    second = "1111zzzzWWWW9999"  # begins inside the first
    out = redactor(first, second).redact(f"[{first}WWWW9999]")
    assert out == f"[{withheld('.env')}]"
    shorter = "QQQQ1111"  # inside the first
    out = redactor(first, shorter).redact(f"{first} and {shorter}")
    assert out == f"{withheld('.env')} and {withheld('.env')}"


def test_values_with_characters_beyond_ascii_are_withheld() -> None:
    value = "pässwörd-ünïcode"
    out = redactor(value).redact(f"é {value} ü {value}")
    assert value not in out
    assert out == f"é {withheld('.env')} ü {withheld('.env')}"


def test_the_redactor_blocks_keep_images() -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": TOKEN},
    }
    blocks = [
        {"type": "text", "text": f"see {TOKEN}"},
        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": TOKEN}]},
        image,
    ]
    out = redactor(TOKEN).redact_blocks(blocks)
    assert out[0]["text"] == f"see {withheld('.env')}"
    assert out[1]["content"][0]["text"] == withheld(".env")
    assert out[2] is image


def test_the_collector_finds_protected_files_in_ignored_folders(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("node_modules/\n")
    copy = tmp_path / "node_modules" / "pkg" / ".env"
    copy.parent.mkdir(parents=True)
    copy.write_text(f"API_TOKEN={TOKEN}\n")
    (tmp_path / "notes.txt").write_text(f"NOT_PROTECTED_TOKEN={TOKEN[::-1]}\n")
    secrets = SecretValues(ProtectedPaths(tmp_path), env={})
    out = secrets.withhold(f"{TOKEN} {TOKEN[::-1]}")
    assert out == f"{withheld('node_modules/pkg/.env')} {TOKEN[::-1]}"


def test_the_collector_reads_a_changed_file_again_and_walks_when_stale(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("API_KEY=first-value\n")
    secrets = SecretValues(ProtectedPaths(tmp_path), env={})
    assert secrets.withhold("first-value") == withheld(".env")
    env.write_text("API_KEY=second-value-longer\n")  # a new size: read again at the next use
    assert secrets.withhold("first-value second-value-longer") == f"first-value {withheld('.env')}"
    (tmp_path / "deploy.pem").write_text(PEM)
    assert secrets.withhold(KEY_BODY[0]) == KEY_BODY[0]  # not walked: not known yet
    secrets.mark_stale()
    assert secrets.withhold(KEY_BODY[0]) == withheld("deploy.pem")


def test_the_collector_holds_the_servers_environment(tmp_path: Path) -> None:
    secrets = SecretValues(ProtectedPaths(tmp_path), env={"ANTHROPIC_API_KEY": "sk-ant-xyz"})
    assert secrets.withhold("key sk-ant-xyz") == "key " + withheld(
        "the server's environment ($ANTHROPIC_API_KEY)"
    )


def test_the_collector_reads_a_protected_links_target(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".env").write_text(f"TOKEN={TOKEN}\n")
    root = tmp_path / "ws"
    root.mkdir()
    os.symlink(outside / ".env", root / ".env")
    secrets = SecretValues(ProtectedPaths(root), env={})
    assert TOKEN not in secrets.withhold(TOKEN)


@pytest.mark.parametrize("prefix", [b"", b"x", b"xy", b"a line before it\n" * 3])
def test_a_value_in_base64_wrapped_over_lines_is_withheld(prefix: bytes) -> None:
    # `base64` (and `git show ... | base64`) wraps at 76 characters: a form may span a break.
    blob = base64.encodebytes(prefix + f"WEBHOOK_URL_PART={TOKEN}{TOKEN}\nB=2\n".encode()).decode()
    out = redactor(TOKEN).redact(blob)
    assert withheld(".env") in out
    joined = out.replace("\n", "")
    for form in base64_forms(TOKEN):
        assert form not in joined


def test_after_a_command_the_walk_skips_dependency_folders(tmp_path: Path) -> None:
    secrets = SecretValues(ProtectedPaths(tmp_path), env={})
    assert secrets.withhold("nothing") == "nothing"
    (tmp_path / ".env.local").write_text("API_KEY=written-by-a-command\n")
    modules = tmp_path / "node_modules" / "pkg"
    modules.mkdir(parents=True)
    (modules / ".env").write_text("API_KEY=installed-meanwhile\n")
    secrets.mark_changed()
    out = secrets.withhold("written-by-a-command installed-meanwhile")
    assert out == f"{withheld('.env.local')} installed-meanwhile"
    secrets.mark_stale()  # as the next run starts
    out = secrets.withhold("written-by-a-command installed-meanwhile")
    assert out == f"{withheld('.env.local')} {withheld('node_modules/pkg/.env')}"


def test_a_keys_armor_line_is_no_secret_its_body_is() -> None:
    key = "\n".join(KEY_BODY)
    found = values(f'SIGNING_KEY="-----BEGIN PRIVATE KEY-----\n{key}\n-----END PRIVATE KEY-----"\n')
    assert set(KEY_BODY) <= found
    assert not any("-----" in value for value in found)


def test_values_wrapped_many_times_in_a_long_text_are_all_withheld() -> None:
    # Many hits across many line breaks: each hit's place is found from the last one's.
    value = "Zq8wLm3nPx7rTy2v"
    lines = [f"{'a' * (i % 70)}{value[: i % 16]}\n{value[i % 16 :]} line {i}" for i in range(400)]
    out = redactor(value).redact("\n".join(lines))
    assert out.count(withheld(".env")) == 400
    assert value[:8] not in out and value[8:] not in out
