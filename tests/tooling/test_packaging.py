"""The wheel carries every module: built from src/ (setuptools finds the packages itself), it holds every package
of the tree and the grammar, and, installed into a fresh venv, imports every module and checks a spec with the
grammar it ships."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"


def _packages_in_tree() -> dict[str, Path]:
    """Dotted package name → folder, for every folder with an __init__.py in src/plait/."""
    out: dict[str, Path] = {}
    for init in (SRC / "plait").rglob("__init__.py"):
        rel = init.parent.relative_to(SRC)
        if any(part.startswith((".", "__")) for part in rel.parts):
            continue
        out[".".join(rel.parts)] = init.parent
    return out


def _modules_in_tree() -> list[str]:
    out = []
    for package, folder in _packages_in_tree().items():
        out.append(package)
        # __main__ would run the CLI on import; the console script below runs it instead.
        out.extend(
            f"{package}.{p.stem}" for p in sorted(folder.glob("*.py")) if p.name not in ("__init__.py", "__main__.py")
        )
    return sorted(out)


def _data_in_tree() -> list[str]:
    """Every file inside the package that is not Python source (the grammar): the wheel must carry each."""
    return sorted(
        p.relative_to(SRC).as_posix()
        for p in (SRC / "plait").rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    )


def _build_wheel(tmp_path: Path) -> Path:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(wheels), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    [wheel] = wheels.glob("plait-*.whl")
    return wheel


def test_the_tree_has_the_grammar_as_data():
    assert "plait/grammars/plait.lark" in _data_in_tree()


@pytest.mark.slow
def test_the_wheel_holds_every_package_and_the_grammar(tmp_path):
    names = set(zipfile.ZipFile(_build_wheel(tmp_path)).namelist())
    missing_packages = [p for p in _packages_in_tree() if p.replace(".", "/") + "/__init__.py" not in names]
    missing_data = [f for f in _data_in_tree() if f not in names]
    assert (missing_packages, missing_data) == ([], [])


IMPORT_ALL = """
import importlib, json, sys
names = json.loads(sys.argv[1])
bad = {}
for name in names:
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        bad[name] = f"{type(exc).__name__}: {exc}"
        continue
    if not module.__file__.startswith(sys.prefix):
        bad[name] = "imported from " + module.__file__
print(json.dumps(bad))
"""


@pytest.mark.slow
def test_the_wheel_installed_in_a_fresh_venv_imports_every_module(tmp_path):
    import json

    wheel = _build_wheel(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    # The dependencies come from this venv's site-packages as a plain path (a .pth line): its own .pth files,
    # among them the editable install's import hook, are not processed, so plait can only come from the wheel.
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (site / "outer-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run(
        [str(python), "-c", IMPORT_ALL, json.dumps(_modules_in_tree())],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {}
    spec = tmp_path / "spec.plait"
    spec.write_text('model fast = "openai/gpt-4o-mini"\nagent main { model = fast }\n')
    checked = subprocess.run(
        [str(venv / "bin" / "plait"), "check", str(spec)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert (checked.returncode, checked.stdout) == (0, "No problems found in 1 file.\n"), checked.stderr
