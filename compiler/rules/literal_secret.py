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

import math
import re
from collections import Counter
from functools import cache

from plait.core.diagnostics import Fix

from plait.core.codes import make
from ..context import CompileContext
from ._literals import string_literals

__all__ = ["CODE", "literal_secret", "looks_secret"]

CODE = "P501"

# (what it is, the variable it usually lives in, pattern); most specific first.
_FORMATS = (
    ("an Anthropic API key", "ANTHROPIC_API_KEY", r"sk-ant-[A-Za-z0-9_\-]{20,}"),
    ("an OpenAI project key", "OPENAI_API_KEY", r"sk-proj-[A-Za-z0-9_\-]{20,}"),
    ("an OpenAI API key", "OPENAI_API_KEY", r"sk-[A-Za-z0-9_\-]{20,}"),
    ("a Google API key", "GOOGLE_API_KEY", r"AIza[0-9A-Za-z_\-]{35}"),
    ("a GitHub token", "GITHUB_TOKEN", r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("a Hugging Face token", "HF_TOKEN", r"hf_[A-Za-z0-9]{30,}"),
    ("a Slack token", "SLACK_TOKEN", r"xox[abpors]-[A-Za-z0-9\-]{10,}"),
    ("an AWS access key id", "AWS_ACCESS_KEY_ID", r"(?:AKIA|ASIA)[0-9A-Z]{16}"),
    ("a JSON Web Token", "API_TOKEN", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("a bearer token", "API_TOKEN", r"Bearer\s+[A-Za-z0-9._~+/=\-]{16,}"),
)


@cache
def _formats() -> tuple[re.Pattern[str], list[tuple[str, str, re.Pattern[str]]]]:
    """(any format, each format). One search rules most strings out; the rest are
    named by the most specific format they contain. Compiled on first use: most
    specs hold no string that needs them, and compiling costs ~3 ms per process."""
    each = [(what, var, re.compile(r"(?<![A-Za-z0-9])" + pattern)) for what, var, pattern in _FORMATS]
    return re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(pattern for _, _, pattern in _FORMATS) + ")"), each

# A whole word of the key: `X-Auth-Token` and `client_secret` are credentials, `max_tokens` is not.
_CREDENTIAL_KEY = re.compile(
    r"(?:^|[^a-z0-9])(?:api[_-]?key|apikey|auth|authorization|token|secret|password|passwd|credentials?)(?:$|[^a-z0-9])", re.I
)
#: Literal starts of the formats above: a file containing none of them needs no regex search.
_PREFIXES = ("sk-", "AIza", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "hf_", "xox", "AKIA", "ASIA", "eyJ", "Bearer")
_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.~]{32,}")


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _random_looking(token: str) -> bool:
    # Mixed classes and high entropy separate keys from long words, paths and rules of dashes.
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token) and _entropy(token) >= 3.5


def looks_secret(text: str, key: str | None) -> tuple[str, str, int] | None:
    """(what it looks like, a variable name for it, where it starts) or None."""
    any_format, formats = _formats()
    if any_format.search(text):
        for what, var, pattern in formats:
            match = pattern.search(text)
            if match:
                return what, var, match.start()
    if key == "api_key":
        return "a literal API key", "API_KEY", 0
    if key is not None and _CREDENTIAL_KEY.search(key) and "{{" not in text:
        for match in _TOKEN.finditer(text):
            if _random_looking(match.group()):
                return "a credential", "API_KEY", match.start()
    return None


def _may_hold_secrets(text: str) -> bool:
    # Most files have no credential anywhere: one search of the raw text skips the AST walk.
    # A `\\u` escape could spell a key the raw text hides, so it forces the walk.
    if "api_key" in text or "\\u" in text or any(p in text for p in _PREFIXES):
        return True
    return any(_random_looking(m.group()) for m in _TOKEN.finditer(text)) and bool(_CREDENTIAL_KEY.search(text))


def literal_secret(ctx: CompileContext) -> None:
    sources = ctx.load.sources
    modules = [m for m in ctx.load.modules if m.file not in sources or _may_hold_secrets(sources[m.file].text)]
    for string, key in string_literals(modules):
        found = looks_secret(string.value, key)
        if found is None:
            continue
        what, var, start = found
        shown = string.value[start : start + 4] + "…"
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
