"""Text or a graph value → the same with every credential hidden: one catalogue of secret formats, one rule.

Every place that decides "is this a secret" reads this module: the literal-secret
check (P501), the diagnostic masks of `plait check`, the graph records (protected
once, where the graph is built, so every output format shows the same thing)
and the HTML source pane.

The formats are ported from the two catalogues users know, not grown by hand:
gitleaks' default rules (MIT, https://github.com/gitleaks/gitleaks,
config/gitleaks.toml: the hand-written formats below by rule id, every other
rule in src/plait/core/secret_rules.py) and detect-secrets' plugins (Apache-2.0,
https://github.com/Yelp/detect-secrets, detect_secrets/plugins).
detect-secrets itself is not a dependency: its plugins scan files through a
settings singleton and its import costs more than `plait check` (decisions.md).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import fields, replace
from functools import cache
from typing import Any, Callable, Iterator
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from plait.core.record import Record, record
from plait.core.secret_rules import RULES

__all__ = [
    "FORMATS",
    "REDACTED",
    "Format",
    "Found",
    "Secret",
    "credential_key",
    "find_secrets",
    "protect",
    "protect_record",
    "random_looking",
    "redact_text",
    "redact_url",
    "reveal",
    "reveal_record",
    "secret_ranges",
]

REDACTED = "<redacted>"


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def random_looking(token: str) -> bool:
    """Mixed letters and digits and high entropy: key material, not a long word, path or rule of dashes."""
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token) and entropy(token) >= 3.5


def _basic_credentials(token: str) -> bool:
    # "Basic instructions" is prose; "Basic dXNlcjpwYXNz" decodes to user:password.
    import base64
    import binascii

    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and decoded.isascii()


def _hex_token(token: str) -> bool:
    # detect-secrets' HexHighEntropyString limit (3.0); a run of one digit is not a key.
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token) and entropy(token) >= 3.0


def _aws_secret_shape(token: str) -> bool:
    return (
        any(c.isupper() for c in token)
        and any(c.islower() for c in token)
        and any(c.isdigit() for c in token)
        and ("/" in token or "+" in token)
        and entropy(token) >= 3.5
    )


@record(kw_only=False)
class Format(Record):
    #: The gitleaks rule id (or detect-secrets plugin) the pattern is ported from.
    id: str
    #: What it is, for a message: "looks like a Stripe API key".
    what: str
    #: The environment variable it usually lives in, for the fix.
    var: str
    #: The pattern; when it has a group, only that group is the secret (the password of a URL).
    pattern: str
    #: A test the matched secret must pass (decodes as credentials, is random enough).
    check: Callable[[str], bool] | None = None
    #: Cheap preconditions, so the pattern runs only over a text that could hold a match: lower-case
    #: pieces every match contains (all of them), and the run of `[A-Za-z0-9+/]` every match holds.
    requires: tuple[str, ...] = ()
    run: int = 0
    #: Lower-case keywords (gitleaks'), one of which a text must hold for the pattern to run at all.
    keywords: tuple[str, ...] = ()
    #: When set, the pattern runs only within this many characters of each keyword found (semi-generic rules:
    #: the keyword, an assignment, then the value), never over the whole text.
    near: int = 0
    #: The group that is the secret; None: the first group when the pattern has one, else the whole match.
    group: int | None = None


_B = r"(?<![A-Za-z0-9_])"  # a token starts at a word boundary (`\b` would also split at `-`)

#: Most specific first: a text is named by the first format it holds.
FORMATS: tuple[Format, ...] = (
    Format("anthropic-api-key", "an Anthropic API key", "ANTHROPIC_API_KEY", _B + r"sk-ant-[A-Za-z0-9_\-]{20,}"),
    Format(
        "openai-api-key",
        "an OpenAI project key",
        "OPENAI_API_KEY",
        _B + r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}",
    ),
    Format("openai-api-key", "an OpenAI API key", "OPENAI_API_KEY", _B + r"sk-[A-Za-z0-9_\-]{20,}"),
    Format(
        "stripe-access-token",
        "a Stripe API key",
        "STRIPE_API_KEY",
        _B + r"(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,99}",
    ),
    Format("gcp-api-key", "a Google API key", "GOOGLE_API_KEY", _B + r"AIza[0-9A-Za-z_\-]{30,}"),
    Format(
        "github-pat",
        "a GitHub token",
        "GITHUB_TOKEN",
        _B + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    Format(
        "gitlab-pat",
        "a GitLab token",
        "GITLAB_TOKEN",
        _B + r"(?:gl(?:pat|ptt|dt|rt|cbt|soat|ffct|imt|agent|oas|ft)-[0-9A-Za-z_\-]{20,}|GR1348941[0-9A-Za-z_\-]{20,})",
    ),
    Format("huggingface-access-token", "a Hugging Face token", "HF_TOKEN", _B + r"hf_[A-Za-z0-9]{30,}"),
    Format(
        "slack-webhook-url",
        "a Slack webhook URL",
        "SLACK_WEBHOOK_URL",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/_\-]{20,})",
    ),
    Format("slack-bot-token", "a Slack token", "SLACK_TOKEN", _B + r"xox[abpors]-[A-Za-z0-9\-]{10,}"),
    Format(
        "aws-access-token",
        "an AWS access key id",
        "AWS_ACCESS_KEY_ID",
        _B + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Za-z0-9])",
    ),
    # detect-secrets AWSKeyDetector: 40 characters of base64 near the word "aws".
    Format(
        "aws-secret-access-key",
        "an AWS secret access key",
        "AWS_SECRET_ACCESS_KEY",
        r"(?i:aws)[A-Za-z0-9_\-\s\"'=:]{0,24}?(?<![A-Za-z0-9/+])([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        requires=("aws",),
        run=40,
    ),
    # The same 40-character shape anywhere, when it mixes cases, digits and `/` or `+` as AWS keys do.
    Format(
        "aws-secret-access-key",
        "an AWS secret access key",
        "AWS_SECRET_ACCESS_KEY",
        r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
        _aws_secret_shape,
        run=40,
    ),
    Format(
        "private-key", "a private key", "PRIVATE_KEY", r"-----BEGIN[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)?-----[^\"]*"
    ),
    Format(
        "jwt", "a JSON Web Token", "API_TOKEN", _B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
    ),
    Format("bearer-token", "a bearer token", "API_TOKEN", r"(?i:\bbearer)\s+([A-Za-z0-9._~+/\-]{16,}=*)"),
    # detect-secrets BasicAuthDetector (a URL's user:password@) and an `Authorization: Basic` value.
    Format(
        "basic-auth",
        "HTTP Basic credentials",
        "API_PASSWORD",
        r"(?i:\bbasic)\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
        _basic_credentials,
        requires=("basic",),
        run=8,
    ),
    Format(
        "basic-auth",
        "a password in a URL",
        "API_PASSWORD",
        # `:/` too: a URL joined into a file path loses one slash.
        r"[A-Za-z][A-Za-z0-9+.\-]*:/{1,2}[^\s/?#@:\"{}<>]+:([^\s/?#@\"{}<>]+)@",
        requires=(":/", "@"),
    ),
    # detect-secrets HexHighEntropyString: 32 or more hex digits (API keys, HMAC secrets).
    Format(
        "hex-high-entropy",
        "a hex token",
        "API_TOKEN",
        r"(?<![A-Za-z0-9_\-])(?:[0-9a-f]{32,}|[0-9A-F]{32,})(?![A-Za-z0-9_\-])",
        _hex_token,
        run=32,
    ),
)


#: gitleaks' semi-generic prefix: up to 50 name characters, then the keyword; a keyword window reaches that far
#: back and as far forward as an assignment and the longest value of such a rule (kraken's 90, yandex's ~130).
_NEAR = 260


def _passes(limit: float | None, allowed: str | None) -> Callable[[str], bool] | None:
    # gitleaks' entropy limit (a match whose secret is not more random than it is a placeholder or a word) and
    # the rule's allowlist (secrets of the shape upstream knows to be examples or names, `AKIA...EXAMPLE`).
    if not limit and not allowed:
        return None
    # The allowlist is compiled when a match is first tested (`re` caches it), not for every process.
    return lambda token: (not limit or entropy(token) > limit) and (not allowed or not re.search(allowed, token))


def _ported(row: tuple[Any, ...]) -> Format:
    rule_id, what, var, pattern, keywords, limit, group, near, allowed = row
    check = _passes(limit, allowed)
    return Format(rule_id, what, var, pattern, check, keywords=keywords, near=_NEAR if near else 0, group=group)


FORMATS += tuple(_ported(row) for row in RULES)

# A key (attribute, map key, header or query name) that says its value is a credential:
# `X-Auth-Token` and `client_secret` are; `max_tokens` is not (whole words only).
_CREDENTIAL_KEY = (
    r"(?i)(?:^|[^a-z0-9])(?:api[_-]?key|apikey|auth|authorization|token|secret|password|passwd|passw|pwd|cookie"
    r"|credentials?|private[_-]?key)(?:$|[^a-z0-9])"
)
# In source text: a quoted value written right after a key (`token = "..."`, `"X-Api-Key" = "..."`);
# it counts when `credential_key` says the key names a credential, as for graph values.
# A key starts where a name starts and is taken whole (lookbehind, possessive): otherwise a long word
# is rescanned from each of its characters, which is quadratic on a one-line megabyte spec.
_KEYED_VALUE = r"(?<![A-Za-z0-9_\-])([A-Za-z0-9_\-]++)\"?\s*[=:]\s*\"([^\"\n{}]{8,}+)\""
# In source text: a URL query value whose name says it is a credential (`?api_key=...`).
_QUERY_VALUE = r"[?&]([A-Za-z0-9_.\-]++)=([^&#\"\s{}<>]++)"
# A long run of token characters mixing upper, lower and digits reads as random key material:
# a whole graph value, or a whole quoted string in source text.
_OPAQUE = r"[A-Za-z0-9_\-+/=]{32,}"
_OPAQUE_QUOTED = rf"\"({_OPAQUE}+)\""


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """One of the patterns above, compiled on first use: a check that meets no key, query or quoted run (most
    small specs) never pays for them."""
    return re.compile(pattern)


def credential_key(key: str | None) -> bool:
    return bool(key) and bool(_compiled(_CREDENTIAL_KEY).search(key or ""))


#: Lower-case pieces one of which each format's secret (or its context) contains: a text holding none of a
#: format's needles skips its pattern. `in` over the text is a C scan; one alternation of every pattern cost
#: 1.7 µs per character (3 s on 2 MB of blank lines). Formats without needles are single character-class runs.
_NEEDLES: dict[str, tuple[str, ...]] = {
    "anthropic-api-key": ("sk-ant-",),
    "openai-api-key": ("sk-",),
    "stripe-access-token": ("k_test_", "k_live_", "k_prod_"),
    "gcp-api-key": ("aiza",),
    "github-pat": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab-pat": ("gl", "gr1348941"),
    "huggingface-access-token": ("hf_",),
    "slack-webhook-url": ("hooks.slack.com/",),
    "slack-bot-token": ("xox",),
    "aws-access-token": ("a3t", "akia", "asia", "abia", "acca"),
    "private-key": ("private key",),
    "jwt": ("eyj",),
    "bearer-token": ("bearer",),
    "basic-auth": ("basic", ":/"),
}


@cache
def _pattern(fmt: Format) -> re.Pattern[str]:
    """A format's pattern, compiled the first time a text holds one of its needles: compiling all
    of them is ~3 ms, most of the time that a small `plait check` spends looking for secrets."""
    return re.compile(fmt.pattern)


#: Base64 characters → "a", anything else → " ": the longest run of them (the body of an AWS secret or a
#: hex token) is then found by C string search instead of a regex tried at every character (~70 ns each).
_RUN_TABLE = bytes(
    0x61 if chr(i) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" else 0x20 for i in range(256)
)


def longest_base64_run(text: str, at_least: int = 48, chunk: int = 4096) -> int:
    """The length of the longest run of `[A-Za-z0-9+/]` in `text`, capped at `at_least`.

    In pieces of `chunk` characters (each seeing `at_least` past its end, so a run that crosses is seen
    whole up to the cap): the bytes made from a piece stay small beside a megabyte spec."""
    low = 0
    for start in range(0, len(text), chunk):
        shape = text[start : start + chunk + at_least].encode("utf-8", "replace").translate(_RUN_TABLE)
        high = at_least  # the longest run is >= low and <= high
        while low < high:
            mid = (low + high + 1) // 2
            if b"a" * mid in shape:
                low = mid
            else:
                high = mid - 1
        if low >= at_least:
            break
    return low


@record(kw_only=False)
class Found(Record):
    #: The secret's [start, end) in the text searched (the password alone for a URL).
    start: int
    end: int
    format: Format


def _index() -> tuple[tuple[tuple[str, tuple[int, ...]], ...], tuple[int, ...]]:
    """Each keyword → the formats (by position) it admits; and the formats with no keyword, which always run."""
    by_needle: dict[str, list[int]] = {}
    always: list[int] = []
    for i, fmt in enumerate(FORMATS):
        needles = fmt.keywords or _NEEDLES.get(fmt.id, ())
        if not needles:
            always.append(i)
        for needle in needles:
            by_needle.setdefault(needle, []).append(i)
    return tuple((n, tuple(found)) for n, found in by_needle.items()), tuple(always)


_BY_NEEDLE, _ALWAYS = _index()
#: Needles without whitespace (searched for in a long text's distinct words), and with (in the text itself).
_BY_WORD = tuple((n, f) for n, f in _BY_NEEDLE if n.split() == [n])
_BY_SPACED = tuple((n, f) for n, f in _BY_NEEDLE if n.split() != [n])
_WORDS_OVER = 2048


def find_secrets(text: str, start: int = 0, end: int | None = None) -> list[Found]:
    """Every known-format secret in `text[start:end]`, left to right, most specific format first at a place."""
    end = len(text) if end is None else min(end, len(text))
    if start >= end:
        return []
    lowered = text[start:end].lower()
    # A needle without whitespace lies inside one whitespace-free word: in a long text, searching each distinct
    # word once (a spec repeats its words) is several times cheaper than ~260 searches of the whole text.
    words = "\n".join(set(lowered.split())) if len(lowered) > _WORDS_OVER else lowered
    admitted = set(_ALWAYS)
    for needle, formats in _BY_WORD:
        if needle in words:
            admitted.update(formats)
    for needle, formats in _BY_SPACED:
        if needle in lowered:
            admitted.update(formats)
    longest: int | None = None
    found: list[Found] = []
    for i in sorted(admitted):
        fmt = FORMATS[i]
        if fmt.requires and not all(n in lowered for n in fmt.requires):
            continue
        if fmt.run:
            if longest is None:
                longest = longest_base64_run(lowered)
            if longest < fmt.run:
                continue
        pattern = _pattern(fmt)
        for lo_w, hi_w in _near(lowered, start, end, fmt) if fmt.near else ((start, end),):
            for m in pattern.finditer(text, lo_w, hi_w):
                lo, hi = m.span(_secret_group(m, fmt))
                if hi > lo and (fmt.check is None or fmt.check(text[lo:hi])):
                    found.append(Found(lo, hi, fmt))
    found.sort(key=lambda f: f.start)
    return found


def _secret_group(m: re.Match[str], fmt: Format) -> int:
    # As gitleaks: the rule's secret group, else the first group that took part in the match, else the match.
    if fmt.group is not None:
        return fmt.group
    return next((i for i in range(1, (m.re.groups or 0) + 1) if m.start(i) >= 0), 0)


def _near(lowered: str, start: int, end: int, fmt: Format) -> list[tuple[int, int]]:
    """The merged windows of `text` around each of `fmt`'s keywords in `lowered` (`text[start:end]`, lower-cased)."""
    windows: list[tuple[int, int]] = []
    for keyword in fmt.keywords:
        at = lowered.find(keyword)
        while at >= 0:
            windows.append((max(start, start + at - fmt.near), min(end, start + at + len(keyword) + fmt.near)))
            at = lowered.find(keyword, at + 1)
    return merge(windows)


def secret_ranges(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sorted, merged [start, end) ranges of source text to hide: known formats, values of credential keys,
    and long quoted random-looking runs."""
    end = len(text) if end is None else min(end, len(text))
    ranges = [(f.start, f.end) for f in find_secrets(text, start, end)]
    ranges += [m.span(2) for m in _compiled(_KEYED_VALUE).finditer(text, start, end) if credential_key(m.group(1))]
    ranges += [m.span(1) for m in _compiled(_OPAQUE_QUOTED).finditer(text, start, end) if _mixed(m.group(1))]
    ranges += [m.span(2) for m in _compiled(_QUERY_VALUE).finditer(text, start, end) if credential_key(m.group(1))]
    return merge(ranges)


def _mixed(value: str) -> bool:
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)


def merge(ranges: Any) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(r for r in ranges if r[1] > r[0]):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def redact_text(text: str) -> str:
    """Source text with every secret `secret_ranges` finds replaced by "<redacted>"."""
    out, last = [], 0
    for lo, hi in secret_ranges(text):
        out += [text[last:lo], REDACTED]
        last = hi
    out.append(text[last:])
    return "".join(out)


def redact_url(url: str) -> str:
    """A URL with its password and every credential-looking query value replaced."""
    if "://" not in url:
        return redact_text(url)
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    if "@" in parts.netloc:
        user, _, host = parts.netloc.rpartition("@")
        name, colon, _password = user.partition(":")
        parts = parts._replace(netloc=f"{name}{colon}{REDACTED if colon else ''}@{host}")
    if parts.query:
        query = parse_qsl(parts.query, keep_blank_values=True)
        hidden = [(k, REDACTED if credential_key(k) and v and "{{" not in v else v) for k, v in query]
        if hidden != query:
            parts = parts._replace(query=urlencode(hidden, safe="{}<>"))
    return redact_text(urlunsplit(parts))


class Secret(str):
    """A graph value that held a secret: as a str it *is* the redacted text, so every reader that prints,
    serialises or compares it sees "<redacted>"; only `reveal` (the runtime's graph adapter) gets the value."""

    __slots__ = ("value",)
    value: str

    def __new__(cls, shown: str, value: str) -> "Secret":
        self = super().__new__(cls, shown)
        self.value = value
        return self

    def __repr__(self) -> str:
        return f"Secret({str.__repr__(self)})"

    def __reduce__(self) -> tuple[Any, ...]:
        # A pickled or deep-copied graph keeps the value it must run with.
        return (Secret, (str(self), self.value))


#: Attributes that hold environment variable *names*: a name is what a reader needs, never a value.
_NAMES_ONLY = frozenset({"api_key_env", "env"})


def _protect_str(value: str, key: str | None, names_only: bool) -> str:
    if isinstance(value, Secret):
        return value
    shown = redact_url(value) if "://" in value else redact_text(value)
    if shown == value and not names_only and value and "{{" not in value:
        # A path (script file, tool folder) is long and mixed too: only slash-free runs count as opaque.
        if credential_key(key) or ("/" not in value and _compiled(_OPAQUE).fullmatch(value) and _mixed(value)):
            shown = REDACTED
    return value if shown == value else Secret(shown, value)


def protect(value: Any, key: str | None = None, *, names_only: bool = False) -> Any:
    """`value` with every string that holds a secret replaced by a `Secret` (dicts, lists and tuples walked;
    a string under a credential-named key counts as one)."""
    if isinstance(value, str):
        return _protect_str(value, key, names_only)
    if isinstance(value, dict):
        out = {k: protect(v, k if isinstance(k, str) else None, names_only=names_only) for k, v in value.items()}
        return value if all(out[k] is value[k] for k in value) else out
    if isinstance(value, list | tuple):
        items = [protect(v, key, names_only=names_only) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return items if isinstance(value, list) else tuple(items)
    return value


#: Not the spec's values: the record's own identity and type, and an MCP server's fingerprint (a sha256 of
#: names, made to be compared in the open; it reads like a hex token).
_OWN_FIELDS = frozenset({"kind", "name", "span", "file", "output", "fingerprint"})


def protect_record(record: Any) -> Any:
    """A frozen dataclass record with every secret-bearing attribute protected (the same record when none)."""
    changed = {}
    for f in fields(record):
        if f.name in _OWN_FIELDS:
            continue
        value = getattr(record, f.name)
        if isinstance(value, str | dict | list | tuple):
            new = protect(value, names_only=f.name in _NAMES_ONLY)
            if new is not value:
                changed[f.name] = new
    return replace(record, **changed) if changed else record


def reveal(value: Any) -> Any:
    """The inverse of `protect`: the values the runtime must send."""
    if isinstance(value, Secret):
        return value.value
    if isinstance(value, dict):
        return {k: reveal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [reveal(v) for v in value]
    if isinstance(value, tuple):
        return tuple(reveal(v) for v in value)
    return value


def reveal_record(record: Any) -> Any:
    """A graph record with its secrets' values back (the same record when it holds none)."""
    changed = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if isinstance(value, str | dict | list | tuple) and next(iter_secrets(value), None) is not None:
            changed[f.name] = reveal(value)
    return replace(record, **changed) if changed else record


def iter_secrets(value: Any) -> Iterator[Secret]:
    """Every `Secret` inside a protected value (tests, and the runtime's own checks)."""
    if isinstance(value, Secret):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from iter_secrets(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from iter_secrets(v)
