"""How a file's name is written in what the model sees, and read back from what it sends.

A name is shown as it is, unless it holds a control character other than a tab (a newline, a
carriage return, an escape, any other C0 or C1 control, DEL, or U+2028/U+2029, which split
lines too) or begins with a double quote: then it is shown as a JSON string, in double quotes
with JSON's escapes (`"new\\nline.txt"`), so that one name stays on one line of a listing and
cannot pass for two. (A tab splits no line, and a name with one is shown as it is.)

A path the model sends that is a whole JSON string (double quotes at both ends, and valid JSON)
means the name it encodes; any other path is the name itself. So a shown name, passed back as
shown, reaches the same file, and so does the raw name (a JSON tool input can hold a newline).
"""

from __future__ import annotations

import json
import re

# What makes a name shown quoted; a leading quote too, so that a name shown in quotes always
# means the name its JSON encodes.
_NEEDS_QUOTES = re.compile('[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]|^"')
# What json.dumps(ensure_ascii=False) leaves as it is but a line splitter may act on.
_LEFT_RAW_BY_JSON = re.compile("[\x7f-\x9f\u2028\u2029]")


def shown_name(name: str) -> str:
    """`name` as the model sees it: as it is, or as a JSON string (see the module's rule)."""
    if not _NEEDS_QUOTES.search(name):
        return name
    quoted = json.dumps(name, ensure_ascii=False)
    return _LEFT_RAW_BY_JSON.sub(lambda found: f"\\u{ord(found[0]):04x}", quoted)


def given_path(path: str) -> str:
    """The name the model means by `path`: a whole JSON string decoded, else `path` itself."""
    if len(path) < 2 or path[0] != '"' or path[-1] != '"':
        return path
    try:
        decoded = json.loads(path)
    except ValueError:
        return path
    return decoded if isinstance(decoded, str) else path
