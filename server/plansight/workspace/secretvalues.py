"""Secret values withheld from the model: what the protected files and the server's own
environment hold, replaced wherever it shows up in text bound for the model.

The protected-path rules (workspace/secrets.py) keep a secret *file* from the model's tools,
but its content can still come back by other ways: `git show HEAD:.env`, a hardlink or a copy
of `.env` under `node_modules/`, `base64 .env`, an MCP server that reads it. So the values
themselves are known and withheld from every text that goes to the model, whatever brought it.

Known values (`values_in_text`, per protected file): the value of each `NAME=value`,
`NAME: value` and JSON string field whose name is secret (`is_secret_name`, the rule that
also keeps such variables from commands) and is at least 6 characters long; every field value
or lone token of at least 16 characters that is not a plain word, number, path or host name;
the password of a URL that has one; the body lines of every private key. Plus the values (at
least 6 characters) of the server's own secret-named environment variables (`env_values`).

Redaction (`Redactor`) replaces each occurrence of a value, and of its base64 forms (standard
and URL-safe, at each of the 3 byte alignments, so a value inside a larger base64 blob is found
too, as secret scanners do; across line breaks, as `base64` wraps), with `[withheld: a secret
from <where>]`. It has to cost at most a few ms per MB: Python's `re` tries an alternation of
literals at every position (~170 ms per MB for 100 values), so the expression instead matches a
5-character anchor of each form, chosen to begin with the form's rarest character, over the
text's bytes translated so that all those first characters are one byte; `re` then scans in C
for that byte, and a hit is checked against the whole form (see `Redactor`).

`SecretValues` keeps the values of one workspace up to date: it walks the workspace for
protected files (ignored folders such as `node_modules/` included: a copy there is as secret;
`.git` is not entered, its objects are compressed) at first and as each run starts, walks it
again but for dependency folders after a tool that may have written files (a command, an MCP
call), stats the files it knows on every use, and reads a file again only when its size or
mtime changed.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import stat
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from plansight.workspace.sandbox import is_secret_name
from plansight.workspace.secrets import ProtectedPaths

log = logging.getLogger(__name__)

WITHHELD = "[withheld: a secret from {where}]"
NAMED_MIN = 6  # a secret-named field's value
UNNAMED_MIN = 16  # any other value: long and not a plain word, number, path or host name
KEY_LINE_MIN = 8  # a private key's body line (its last one may be short; "AAAA==" is common)
# Folders of dependencies and caches: walked as a run starts, not after every command.
DEPENDENCY_DIRS = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox", "target"})
FILE_MAX_BYTES = 1_000_000  # bigger "protected" files are data, not secrets: not read
ENV_WHERE = "the server's environment"
ANCHOR = 5  # characters: a chance match of so many random ones is rare
# Printable ASCII from rarest to most common in code, diffs and docs (counted over this
# project's sources and git history; `/` and `+` moved among the most common: they also stand
# for `_` and `-`, see Redactor): an anchor begins with a rare character where it can, so
# that few positions of a typical text begin one. Other characters count as rarer still.
_RARE_FIRST = (
    "~Z&^Q%J!X$YV?<KzWBGHU9*#jFLq8\\7DO6M345>|I@;RCPSEA2N][}T{1'0x"
    '`bkv=ywg:)(,um.fhcp+-/_"dliaronste \n'
)
_RANK = {char: rank for rank, char in enumerate(_RARE_FIRST)}

_FIELD = re.compile(
    # NAME=value, export NAME=value, NAME: value (YAML, INI, headers), NAME = value
    r"""^[ \t]*(?:export[ \t]+)?["']?(?P<name>[A-Za-z_][\w.\-]*)["']?[ \t]*[=:][ \t]*"""
    r"""(?P<value>.*?)[ \t]*\r?$""",
    re.MULTILINE,
)
_JSON_FIELD = re.compile(r'"(?P<name>[^"\\\n]{1,200})"\s*:\s*"(?P<value>(?:[^"\\\n]|\\.)*)"')
_KEY_BLOCK = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?P<body>.*?)-----END [A-Z0-9 ]*PRIVATE KEY-----",
    re.DOTALL,
)
_ARMOR = re.compile(r"-----(?:BEGIN|END) [A-Z0-9 ]+-----")
_URL_PASSWORD = re.compile(r"[a-z][a-z0-9+.\-]*://[^:/@\s]*:(?P<password>[^@/\s]+)@", re.I)
_TOKEN = re.compile(r"[^\s\"'`,;=]{16,}")
_NUMBER = re.compile(r"[+\-]?\d[\d_.,:]*(?:e[+\-]?\d+)?", re.I)
_WORDS = re.compile(r"[A-Za-z]+(?:[ \-_.][A-Za-z]+)*")
_WORD_BREAK = re.compile(r"[ \-_.]")
_HOST = re.compile(r"(?:[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?\.)+[a-z]{2,}\.?(?::\d+)?", re.I)
_URL = re.compile(r"[a-z][a-z0-9+.\-]*://[^\s:@/]+(?::\d+)?(?:[/?#]\S*)?", re.I)
_ABSOLUTE_PATH = re.compile(r"(?:[A-Za-z]:|~|\.{1,2})?[/\\][^\s]*")
_PATH_PART = re.compile(r"[A-Za-z_][A-Za-z_\-]*(?:\.[A-Za-z0-9]{1,8})*")


@dataclass(frozen=True)
class KnownSecret:
    value: str
    where: str  # a workspace path, or ENV_WHERE


def withheld(where: str) -> str:
    return WITHHELD.format(where=where)


def values_in_text(text: str, where: str) -> list[KnownSecret]:
    """The secret values one protected file's text holds (see the module's docstring)."""
    found: dict[str, None] = {}

    def add(value: str, named: bool) -> None:
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if _ARMOR.fullmatch(value.strip("\"'")):
            return  # `KEY="-----BEGIN ...` opens a key over lines: its body lines are the secret
        if (named and len(value) >= NAMED_MIN) or secret_looking(value):
            found[value] = None

    for match in _FIELD.finditer(text):
        add(_unquoted(match["value"]), is_secret_name(match["name"]))
    for match in _JSON_FIELD.finditer(text):
        raw = match["value"]
        named = is_secret_name(match["name"])
        add(raw, named)  # as the file (and `cat`) shows it, escapes and all
        decoded = _json_string(raw)
        if decoded is not None and decoded != raw:
            add(decoded, named)
    for match in _URL_PASSWORD.finditer(text):
        add(match["password"], True)
    for match in _TOKEN.finditer(text):
        add(match[0], False)
    # A key inside a JSON string (a service account's `private_key`) has its newlines escaped.
    for match in _KEY_BLOCK.finditer(text.replace("\\n", "\n")):
        for line in match["body"].splitlines():
            line = line.strip()
            if len(line) >= KEY_LINE_MIN and ":" not in line:  # `Proc-Type: ...` headers
                found[line] = None
    return [KnownSecret(value, where) for value in found]


def env_values(env: Mapping[str, str]) -> list[KnownSecret]:
    """The values of the server's own secret-named environment variables (`ANTHROPIC_API_KEY`)."""
    return [
        KnownSecret(value, f"{ENV_WHERE} (${name})")
        for name, value in sorted(env.items())
        if is_secret_name(name) and len(value.strip()) >= NAMED_MIN
    ]


def secret_looking(value: str) -> bool:
    """Whether a value no secret name vouches for is still one: at least 16 characters and
    not a plain word (or words), number, path, host name or URL without a password."""
    if len(value) < UNNAMED_MIN:
        return False
    if _NUMBER.fullmatch(value) or _plain_words(value) or _HOST.fullmatch(value):
        return False
    if _URL.fullmatch(value) and not _URL_PASSWORD.match(value):
        return False
    if _ABSOLUTE_PATH.fullmatch(value) or _relative_path(value):
        return False
    return True


def _plain_words(value: str) -> bool:
    """Letters only, as words or identifiers made of words: in each word, once it has
    lower-case letters, at most one capital in three (camelCase, an acronym inside). A random
    token that happens to hold no digit (`AtvaWMVqazYWckzhijat…`, seen: about 1 in 400 of 40
    characters) has about one capital in two, and is a secret."""
    if not _WORDS.fullmatch(value):
        return False
    for word in _WORD_BREAK.split(value):
        capitals = sum(letter.isupper() for letter in word)
        if capitals != len(word) and capitals * 3 > len(word):
            return False
    return True


def _relative_path(value: str) -> bool:
    parts = value.strip("/").split("/")
    return len(parts) > 1 and all(_PATH_PART.fullmatch(part) for part in parts)


def _unquoted(value: str) -> str:
    """A field's value without its quotes or a trailing ` # comment` (unquoted values only)."""
    value = value.strip()
    if value[:1] in "\"'" and value.count(value[0]) >= 2:
        return value[1 : value.index(value[0], 1)]
    return re.split(r"[ \t]+#", value, maxsplit=1)[0].rstrip(",")


def _json_string(raw: str) -> str | None:
    try:
        decoded = json.loads(f'"{raw}"')
    except ValueError:
        return None
    return decoded if isinstance(decoded, str) else None


def base64_forms(value: str) -> set[str]:
    """The characters a value always turns into inside base64 text, at each of the three byte
    alignments, standard and URL-safe alphabets: the characters that hold bits of the
    value only (the first and last may mix with the neighbouring bytes' bits)."""
    data = value.encode()
    forms: set[str] = set()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + data).decode()
        start = -(-8 * shift // 6)  # the first character with no bit of the padding
        end = 8 * (shift + len(data)) // 6  # past the last character made of the value's bits
        form = encoded[start:end]
        if len(form) >= NAMED_MIN:
            forms.add(form)
            forms.add(form.replace("+", "-").replace("/", "_"))
    return forms


class Redactor:
    """Withholds a fixed set of known values (and their base64 forms) from text.

    The search runs over the text's bytes (ASCII; any other character one `?`, so that
    offsets stay those of the string) translated so that every character that begins an
    anchor becomes `\\x01`: the expression then starts with one literal byte, which `re`
    finds in a tight C loop, and only there tries the anchors' remaining characters (a trie).
    Line breaks are left out of those bytes, so that a form `base64` wrapped over two lines is
    found too (a hit's offsets are then mapped back to the text's, which costs a count of the
    line breaks before it: hits are rare). Each anchor found is checked against the whole form
    in the original text. The URL-safe
    base64 alphabet is folded onto the standard one (`-` as `+`, `_` as `/`) on both sides, so
    that one form stands for both: a value with a `-` also matches with a `+` there, which
    withholds a near-copy of a secret, never less.
    """

    def __init__(self, secrets: Iterable[KnownSecret]) -> None:
        # form → where: of a value in several files (a copy of .env), the shortest path
        forms: dict[str, str] = {}
        ordered = sorted(secrets, key=lambda s: (len(s.where), s.where))
        for secret in ordered:
            if len(secret.value) >= ANCHOR:
                forms.setdefault(_fold(secret.value), secret.where)
        for secret in ordered:
            for form in base64_forms(secret.value):
                forms.setdefault(_fold(form), secret.where)
        self.count = len(forms)
        anchored, self._unanchored = _anchors(forms)
        table = bytearray(range(256))
        table[1] = 2  # a \x01 of the text's own begins nothing
        for folded, canonical in _FOLDED.items():
            table[folded] = ord(canonical)
        for char in {form[at] for at, form, _ in anchored}:
            for byte in _SAME.get(char, char):
                table[ord(byte)] = 1
        self._table = bytes(table)
        # translated anchor (after its first byte) → (offset in the form, form, the translated
        # form, where)
        self._by_anchor: dict[bytes, list[tuple[int, str, bytes, str]]] = {}
        for at, form, where in anchored:
            key = form.encode("ascii", "replace").translate(self._table)
            anchor = key[at + 1 : at + ANCHOR]
            self._by_anchor.setdefault(anchor, []).append((at, form, key, where))
        for entries in self._by_anchor.values():
            entries.sort(key=lambda entry: -len(entry[1]))
        self._pattern = (
            re.compile(b"\\x01" + _trie_expression(_trie(self._by_anchor)))
            if self._by_anchor
            else None
        )

    def __bool__(self) -> bool:
        return self._pattern is not None or bool(self._unanchored)

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where known values occur: (start, end, where), sorted, overlaps merged."""
        found: list[tuple[int, int, str]] = []
        if self._pattern is not None:
            data = text.encode("ascii") if text.isascii() else text.encode("ascii", "replace")
            # Line breaks left out: a form that `base64` wrapped over two lines is found whole.
            translated = data.translate(self._table, b"\r\n")
            unbroken = len(translated) == len(text)
            unbroken_at = _Unbroken(text).at
            search = self._pattern.search
            by_anchor = self._by_anchor
            # Not finditer: a match consumes its anchor, which may overlap another form's.
            match = search(translated)
            while match is not None:
                hit = match.start()
                for offset, form, key, where in by_anchor[match[0][1:]]:
                    begin = hit - offset
                    if begin < 0 or translated[begin : begin + len(key)] != key:
                        continue
                    if unbroken:
                        start, end = begin, begin + len(form)
                    else:
                        start = unbroken_at(begin)
                        end = unbroken_at(begin + len(form) - 1) + 1
                    if _fold(_BREAKS.sub("", text[start:end])) == form:
                        found.append((start, end, where))
                        break
                match = search(translated, hit + 1)
        if self._unanchored:
            folded = _fold(text)
            for form, where in self._unanchored:
                start = folded.find(form)
                while start >= 0:
                    found.append((start, start + len(form), where))
                    start = folded.find(form, start + 1)
        if not found:
            return found
        found.sort()
        merged = [found[0]]
        for start, end, where in found[1:]:
            last_start, last_end, last_where = merged[-1]
            if start <= last_end:
                merged[-1] = (last_start, max(end, last_end), last_where)
            else:
                merged.append((start, end, where))
        return merged

    def redact(self, text: str) -> str:
        spans = self.spans(text)
        if not spans:
            return text
        parts: list[str] = []
        position = 0
        for start, end, where in spans:
            parts.append(text[position:start])
            parts.append(withheld(where))
            position = end
        parts.append(text[position:])
        return "".join(parts)

    def redact_blocks(self, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Content blocks with their text withheld (a tool_result's too); images as they are."""
        out: list[dict[str, Any]] = []
        for block in blocks:
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                block = {**block, "text": self.redact(block["text"])}
            elif kind == "tool_result":
                content = block.get("content")
                if isinstance(content, str):
                    block = {**block, "content": self.redact(content)}
                elif isinstance(content, list):
                    block = {**block, "content": self.redact_blocks(content)}
            out.append(block)
        return out


_BREAKS = re.compile(r"[\r\n]")
_FOLDED = {ord("-"): "+", ord("_"): "/"}
_SAME = {"+": "+-", "/": "/_"}  # a canonical character and the one folded onto it


def _fold(text: str) -> str:
    return text.translate(_FOLDED) if "-" in text or "_" in text else text


class _Unbroken:
    """Where in `text` the character at an index of the text without line breaks is: counted
    from the last index asked (hits come in order), so that many hits cost one pass."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.index = 0  # of the text without breaks ...
        self.breaks = 0  # ... and the line breaks before it in `text`

    def at(self, index: int) -> int:
        if index < self.index:
            self.index = self.breaks = 0
        text, base, breaks = self.text, self.index + self.breaks, self.breaks
        at = index + breaks
        while True:
            more = text.count("\n", base, at + 1) + text.count("\r", base, at + 1)
            if index + breaks + more == at:
                break
            at = index + breaks + more
        self.index, self.breaks = index, at - index
        return at


def _anchors(forms: Mapping[str, str]) -> tuple[list[tuple[int, str, str]], list[tuple[str, str]]]:
    """Where each form's anchor begins ((offset, form, where)), at the form's rarest character,
    and the forms with no window of ASCII characters to anchor ((form, where), searched one by
    one)."""
    anchored: list[tuple[int, str, str]] = []
    unanchored: list[tuple[str, str]] = []
    for form, where in forms.items():
        windows = [at for at in range(len(form) - ANCHOR + 1) if form[at : at + ANCHOR].isascii()]
        if windows:
            at = min(windows, key=lambda at: (_RANK.get(form[at], -1), at))
            anchored.append((at, form, where))
        else:
            unanchored.append((form, where))
    return anchored, unanchored


Trie = dict[int, "Trie"]


def _trie(keys: Iterable[bytes]) -> Trie:
    trie: Trie = {}
    for key in keys:
        node = trie
        for byte in key:
            node = node.setdefault(byte, {})
    return trie


def _trie_expression(node: Trie) -> bytes:
    """One expression for the trie's keys: `re` tries one branch per distinct next byte."""
    branches = [
        re.escape(bytes([byte])) + _trie_expression(child) for byte, child in sorted(node.items())
    ]
    if not branches:
        return b""
    if len(branches) == 1:
        return branches[0]
    return b"(?:" + b"|".join(branches) + b")"


@dataclass(frozen=True)
class _FileValues:
    size: int
    mtime_ns: int
    secrets: tuple[KnownSecret, ...]


class SecretValues:
    """The known secret values of one workspace and the server, kept current (see the module's
    docstring); `withhold` is what every text bound for the model passes through."""

    def __init__(self, protected: ProtectedPaths, env: Mapping[str, str] | None = None) -> None:
        self.protected = protected
        self._env = env_values(os.environ if env is None else env)
        self._files: dict[Path, _FileValues] = {}
        self._walk: Literal["full", "light"] | None = "full"  # the walk due before next use
        self._redactor: Redactor | None = None
        # Tool results are withheld on the event loop, a walk may run in a thread meanwhile.
        self._lock = threading.Lock()

    @property
    def walk_due(self) -> bool:
        """Whether the next refresh walks the workspace (else it stats a few known files)."""
        return self._walk is not None

    def mark_stale(self) -> None:
        """Walk the whole workspace before next use (a run starts: the user may have added or
        changed protected files anywhere, in `node_modules/` too)."""
        self._walk = "full"

    def mark_changed(self) -> None:
        """A command (or an MCP server) may have written files: before next use, walk again,
        but not into dependency folders (the full walk costs ~10 ms per 1,000 files; a copy of
        a known file holds known values anyway)."""
        if self._walk is None:
            self._walk = "light"

    def refresh(self) -> None:
        """Walk the workspace when due, else stat the known files; blocking (a thread)."""
        with self._lock:
            walk, self._walk = self._walk, None
            if walk == "full":
                paths = list(self._protected_files(skip=frozenset()))
            elif walk == "light":
                paths = list({*self._protected_files(skip=DEPENDENCY_DIRS), *self._files})
            else:
                paths = list(self._files)
            changed = False
            current: dict[Path, _FileValues] = {}
            for path in paths:
                known = self._files.get(path)
                values = self._read(path, known)
                if values is not None:
                    current[path] = values
                changed = changed or values is not known
            if changed or set(current) != set(self._files) or self._redactor is None:
                self._files = current
                self._redactor = Redactor(self.known())

    def known(self) -> list[KnownSecret]:
        secrets = list(self._env)
        for values in self._files.values():
            secrets.extend(values.secrets)
        return secrets

    def redactor(self) -> Redactor:
        """The current redactor (refreshed first: blocking)."""
        self.refresh()
        assert self._redactor is not None
        return self._redactor

    def withhold(self, text: str) -> str:
        """`text` with every known value withheld (refreshed first: blocking)."""
        return self.redactor().redact(text)

    def withhold_blocks(self, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Content blocks withheld with the values as last refreshed (no walk: this runs on the
        event loop, as text joins the conversation; the tool results and each run's start
        refresh in a thread). Refreshed here only if never before."""
        redactor = self._redactor if self._redactor is not None else self.redactor()
        return redactor.redact_blocks(blocks) if redactor else blocks

    def _read(self, path: Path, known: _FileValues | None) -> _FileValues | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or st.st_size > FILE_MAX_BYTES:
            return None
        if known is not None and (known.size, known.mtime_ns) == (st.st_size, st.st_mtime_ns):
            return known
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if b"\0" in data:
            return _FileValues(st.st_size, st.st_mtime_ns, ())  # binary (a keystore): no text
        text = data.decode("utf-8", errors="replace")
        where = self._where(path)
        return _FileValues(st.st_size, st.st_mtime_ns, tuple(values_in_text(text, where)))

    def _where(self, path: Path) -> str:
        root = self.protected.root
        return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)

    def _protected_files(self, skip: frozenset[str]) -> Iterator[Path]:
        """Every protected file in the workspace (in folders that protected folders hold too),
        ignored folders included but those named in `skip`; links to protected files (their
        targets) too."""
        decide = self.protected.matcher()
        root = self.protected.root
        pending: list[tuple[Path, str, bool]] = [(root, "", False)]
        while pending:
            folder, prefix, inside = pending.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                relative = prefix + entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != ".git" and entry.name not in skip:
                            secret = inside or decide(relative, True)
                            pending.append((Path(entry.path), relative + "/", secret))
                        continue
                    if entry.is_symlink():
                        if self.protected.protects(relative):
                            yield Path(os.path.realpath(entry.path))
                        continue
                    if entry.is_file(follow_symlinks=False) and (inside or decide(relative, False)):
                        yield Path(entry.path)
                except OSError:
                    continue


__all__ = [
    "ENV_WHERE",
    "WITHHELD",
    "KnownSecret",
    "Redactor",
    "SecretValues",
    "base64_forms",
    "env_values",
    "secret_looking",
    "values_in_text",
    "withheld",
]
