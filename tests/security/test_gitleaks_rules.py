"""The secret catalogue against gitleaks' default rules: every upstream rule is ported (or left out with a reason), and
each ported rule finds its own upstream true positives and none of its false positives.

The examples are copied from upstream into gitleaks_examples.json (its header names the commit and files). A rule
the hand-written formats of src/plait/core/redact.py cover (AWS, GitHub, Slack, ...) must have each of its examples found by
some format; a rule ported into src/plait/core/secret_rules.py, by that rule itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plait.core.redact import FORMATS, find_secrets, redact_text
from plait.core.secret_rules import NOT_PORTED, RULES

DATA = json.loads((Path(__file__).with_name("gitleaks_examples.json")).read_text(encoding="utf-8"))
PORTED = {row[0] for row in RULES}
PORTED_PATTERNS = {row[3] for row in RULES}
IDS = {fmt.id for fmt in FORMATS}
#: Upstream builds these rules' examples in code this copy does not reproduce; their patterns are ported as written.
EXAMPLES_NOT_COPIED = {
    "aws-amazon-bedrock-api-key-long-lived",
    "aws-amazon-bedrock-api-key-short-lived",
    "jwt-base64",
    "privateai-api-token",
}


def _examples(rule: dict, kind: str) -> list[str]:
    lines = list(rule.get(kind + "s", []))
    for identifier, secret in rule.get(("samples" if kind == "tp" else "fp_samples"), []):
        lines += [
            c.replace("{i}", identifier).replace("{I}", identifier.upper()).replace("{s}", secret)
            for c in DATA["contexts"]
        ]
    return lines


def _cases(kind: str) -> list[tuple[str, str]]:
    return [(rid, line) for rid, rule in sorted(DATA["rules"].items()) for line in _examples(rule, kind)]


def test_every_upstream_rule_is_in_the_catalogue_or_left_out_with_a_reason():
    upstream = set(DATA["rules"]) | set(NOT_PORTED)
    assert not set(NOT_PORTED) & IDS
    assert upstream - set(NOT_PORTED) <= IDS, sorted(upstream - set(NOT_PORTED) - IDS)
    assert all(reason for reason in NOT_PORTED.values())


def test_the_formats_the_issue_named_are_ported():
    named = {
        "sendgrid-api-token",
        "npm-access-token",
        "twilio-api-key",
        "telegram-bot-api-token",
        "pypi-upload-token",
        "digitalocean-pat",
        "digitalocean-access-token",
        "digitalocean-refresh-token",
        "shopify-access-token",
        "shopify-shared-secret",
        "shopify-custom-access-token",
        "shopify-private-app-access-token",
        "databricks-api-token",
        "linear-api-key",
        "linear-client-secret",
        "age-secret-key",
    }
    assert named <= PORTED


def test_every_ported_rule_has_upstream_examples_copied():
    missing = {rid for rid in PORTED if not _examples(DATA["rules"].get(rid, {}), "tp")}
    assert missing == EXAMPLES_NOT_COPIED


@pytest.mark.parametrize("rule, line", _cases("tp"))
def test_an_upstream_true_positive_is_found(rule, line):
    found = {f.format.id for f in find_secrets(line)}
    if rule in PORTED:
        assert rule in found, f"{rule} misses its own example {line!r} (found: {sorted(found)})"
    else:
        assert found, f"no format finds {rule}'s example {line!r}"
    assert redact_text(line) != line


#: Upstream false positives plait hides on purpose: a token ends at any character that cannot continue it (a key in a
#: URL path, an escaped JSON string or a file name is still a key), not only at a quote, space or `;`.
HIDDEN_ON_PURPOSE = {
    (
        "infracost-api-token",
        "http://assets.r7.com/assets/media_box_tv_tres_colunas/video_box.ico-7a388b69018576d24b59331fd60aab0c.png",
    ),
}


@pytest.mark.parametrize(
    "rule, line", [(r, line) for r, line in _cases("fp") if r in PORTED and (r, line) not in HIDDEN_ON_PURPOSE]
)
def test_an_upstream_false_positive_is_not_taken_for_that_rule(rule, line):
    # The ported rule itself; a hand-written format may hide more (AWS's documented example key stays hidden).
    found = {f.format.id for f in find_secrets(line) if f.format.pattern in PORTED_PATTERNS}
    assert rule not in found


def test_a_keyword_far_from_its_value_does_not_make_a_semi_generic_match():
    # Semi-generic rules run only near their keyword, and need the keyword, an assignment and the value together.
    assert "linear-client-secret" not in {
        f.format.id for f in find_secrets("linear\n" + "x" * 400 + ' id = "0123456789abcdef0123456789abcdef"')
    }
