"""String literals → P501 for every one that looks like a credential.

Why: a spec is committed, shared and printed in diagnostics; a key written
into it leaks. Keys belong in the environment: `api_key = env("NAME")`.
The diagnostic never repeats the secret (only its first four characters) and
marks the literal's span as redacted so emitters mask the source line.

Known key formats are recognised anywhere (prompts included); a long
high-entropy token is only suspected in a credential position (`api_key`, an
`Authorization` header, a `token`/`secret`/`password` key or parameter).
"""

from __future__ import annotations

import re
from functools import lru_cache

from plait.core.diagnostics import Fix, Severity
from plait.core.redact import credential_key, find_secrets, random_looking
from plait.core.source import SourceFile, Span

from plait.core.codes import declare, make
from ..context import CompileContext
from ._literals import string_literals

# The codes this module raises; their documentation is explain/<code>.md beside it.
P501 = declare("P501", "literal-secret", Severity.ERROR, "a secret written into the spec")

__all__ = ["CODE", "literal_secret", "looks_secret", "looks_secret_in"]

CODE = "P501"

_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.~]{32,}")


def looks_secret(text: str, key: str | None) -> tuple[str, str, int] | None:
    """(what it looks like, a variable name for it, where it starts) or None.

    The formats are core.redact's catalogue, the one every output format hides."""
    found = find_secrets(text)
    if found:
        return found[0].format.what, found[0].format.var, found[0].start
    if key == "api_key":
        return "a literal API key", "API_KEY", 0
    if credential_key(key) and "{{" not in text:
        for match in _TOKEN.finditer(text):
            if random_looking(match.group()):
                return "a credential", "API_KEY", match.start()
    return None


def looks_secret_in(text: str, span: Span, sources: dict[str, SourceFile]) -> tuple[str, str, int] | None:
    """`looks_secret` for text written at `span` (an expression between braces): None at once when the file it is
    in holds nothing secret-looking anywhere, the test this rule skips such a file's strings with. A spec with
    many expressions asked the catalogue's ~260 formats once per expression and per use, most of its check."""
    source = sources.get(span.file)
    if source is not None and not _file_may_hold_secrets(source.text):
        return None
    return looks_secret(text, None)


def _may_hold_secrets(text: str) -> bool:
    # Most files have no credential anywhere: one search of the raw text skips the AST walk.
    # A `\\u` escape could spell a key the raw text hides, so it forces the walk.
    if "api_key" in text or "\\u" in text or find_secrets(text):
        return True
    # A suspected credential is a random-looking 32-character token: most files have none, and that is
    # cheaper to rule out first than a credential-looking key (`max_tokens` makes that search scan it all).
    return any(random_looking(m.group()) for m in _TOKEN.finditer(text)) and credential_key(text)


#: Per file text (a str caches its hash, and a hit is the same object): the rule and the template checks ask alike.
_file_may_hold_secrets = lru_cache(maxsize=64)(_may_hold_secrets)


def literal_secret(ctx: CompileContext) -> None:
    sources = ctx.load.sources
    modules = [m for m in ctx.load.modules if m.file not in sources or _file_may_hold_secrets(sources[m.file].text)]
    for string, key in string_literals(modules):
        found = looks_secret(string.value, key)
        if found is None:
            continue
        what, var, start = found
        # As the masks do: a prefix to recognise it by, never most of a short password.
        shown = string.value[start : start + min(4, (len(string.value) - start) // 4)] + "…"
        fix = f'move it into an environment variable and write `api_key = env("{var}")`'
        if key != "api_key":
            fix = f"move it into an environment variable (`{var}`) and read it from there at run time"
        ctx.diagnostics.append(
            make(
                CODE,
                f"literal secret: `{shown}` looks like {what}",
                string.span,
                notes=["a spec is shared and committed; credentials never belong in it"],
                fix=Fix(fix),
                redact=(string.span,),
            )
        )
