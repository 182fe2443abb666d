"""Optional output fields (`T?`) may be absent or null, as the reference says, from a model and from a code step."""

from __future__ import annotations

import json
import textwrap

import pytest

import plait

OUTPUT = "output { verdict: string, note: string? }"


def _spec(tmp_path, body: str, replies: object = None) -> str:
    (tmp_path / "replies.json").write_text(json.dumps(replies or []))
    path = tmp_path / "spec.plait"
    path.write_text(
        'plait 0.2\nmodel m = "scripted/m" { script = "replies.json" }\n' + textwrap.dedent(body),
        encoding="utf-8",
    )
    return str(path)


@pytest.mark.parametrize("kind", ["agent", "step"])
def test_a_model_reply_that_leaves_an_optional_field_out_is_accepted(tmp_path, kind: str) -> None:
    prompt = "" if kind == "agent" else ', prompt = "Grade {{input}}"'
    spec = _spec(tmp_path, f"{kind} main {{ model = m{prompt}\n {OUTPUT} }}\n", [{"output": {"verdict": "ok"}}])
    result = plait.run(spec, "a draft", raise_on_error=False)
    assert result.error is None and result.output == {"verdict": "ok", "note": None}


def test_a_model_reply_missing_a_required_field_still_fails(tmp_path) -> None:
    spec = _spec(tmp_path, f"agent main {{ model = m\n {OUTPUT} }}\n", [{"output": {"note": "x"}}])
    result = plait.run(spec, "a draft", raise_on_error=False)
    assert result.error.kind == "output_invalid" and "field `verdict` is missing" in result.error.message


@pytest.mark.parametrize("returned", [{"verdict": "ok", "note": None}, {"verdict": "ok"}])
def test_a_code_step_may_return_null_for_an_optional_field_or_leave_it_out(tmp_path, returned: dict) -> None:
    module = f"optmod_{abs(hash(str(tmp_path))) % 10**8}"
    (tmp_path / f"{module}.py").write_text(f"def fn(input):\n    return {returned!r}\n")
    spec = _spec(tmp_path, f'step main {{ run = python("{module}:fn")\n {OUTPUT} }}\n')
    result = plait.run(spec, "x", raise_on_error=False)
    assert result.error is None and result.output == {"verdict": "ok", "note": None}
