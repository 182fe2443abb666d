"""Every attribute the schema types `template` → its placeholders are checked (P401), whatever the kind.

The list of template attributes is read from the schema (compiler.schema.TEMPLATES) by both the flow check and
the template rule; this walks that list, so an attribute added to the schema as a template is held to it too.
"""

from __future__ import annotations

import pytest
from checks_helpers import MODELS, compile_text, only

from plait.compiler.schema import TEMPLATES

# One declaration of each kind that has templates, `{attrs}` standing for its template attributes; a chain runs it.
SPECS = {
    "step": "step s {{ model = fast, {attrs} }}\nchain main = s\n",
    "agent": "agent s {{ model = fast, {attrs} }}\nchain main = s\n",
    "consolidate": (
        "agent a {{ model = fast }}\nagent b {{ model = strong }}\n"
        "consolidate s {{ agents = [a, b], judge = strong, {attrs} }}\nchain main = s\n"
    ),
}


def test_every_kind_with_templates_has_a_spec_here():
    assert set(TEMPLATES) == set(SPECS)


@pytest.mark.parametrize(("kind", "attr"), [(k, a) for k, names in TEMPLATES.items() for a in names])
def test_an_unknown_placeholder_in_a_template_attribute_is_p401(tmp_path, kind, attr):
    attrs = ", ".join(f'{name} = "{"Hi {{inptu}}" if name == attr else "ok"}"' for name in TEMPLATES[kind])
    d = only(compile_text(MODELS + SPECS[kind].format(attrs=attrs), tmp_path), "P401")
    assert "inptu" in d.message
