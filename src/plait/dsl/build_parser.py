"""src/plait/grammars/plait.lark → src/plait/grammars/plait_parser.py, by lark's standalone parser generator.

    python -m plait.dsl.build_parser           # rewrite src/plait/grammars/plait_parser.py
    python -m plait.dsl.build_parser --check   # exit 1 if it was built from another grammar

The generated module is lark's own LALR parser with the grammar's table, written by lark's documented tool
(`python -m lark.tools.standalone`, basic lexer, `[optional]` parts kept as None): plait imports it instead of
lark, so lark is needed only to run this. The tool's output is not byte-for-byte repeatable (lark numbers its
states as its sets iterate), so the first line records the SHA-256 of the grammar it was built from, which is
what `--check` compares; a test runs it, so a grammar edit without regenerating fails CI.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from pathlib import Path

__all__ = ["GRAMMAR_PATH", "PARSER_PATH", "built_from", "generate", "grammar_digest"]

GRAMMAR_PATH = Path(__file__).resolve().parent.parent / "grammars" / "plait.lark"
PARSER_PATH = GRAMMAR_PATH.with_name("plait_parser.py")
_STAMP = "# Generated from plait.lark (sha256 {}) by `python -m plait.dsl.build_parser`; do not edit.\n"


def grammar_digest() -> str:
    return hashlib.sha256(GRAMMAR_PATH.read_bytes()).hexdigest()


def built_from() -> str | None:
    """The digest of the grammar the generated module was built from (None: no module or no stamp)."""
    try:
        with PARSER_PATH.open(encoding="utf-8") as file:
            first = file.readline()
    except OSError:
        return None
    prefix, _, rest = first.partition("(sha256 ")
    return rest.split(")", 1)[0] if prefix and rest else None


def generate() -> str:
    """The module text: the stamp, then what lark's standalone tool writes for the grammar."""
    run = subprocess.run(
        [sys.executable, "-m", "lark.tools.standalone", "--lexer", "basic", "--maybe_placeholders", str(GRAMMAR_PATH)],
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0:
        raise SystemExit(f"lark's standalone tool failed:\n{run.stderr}")
    return _STAMP.format(grammar_digest()) + run.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m plait.dsl.build_parser", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the generated module is out of date")
    args = parser.parse_args(argv)
    if args.check:
        if built_from() != grammar_digest():
            print(f"{PARSER_PATH} is out of date; run `python -m plait.dsl.build_parser`", file=sys.stderr)
            return 1
        return 0
    PARSER_PATH.write_text(generate(), encoding="utf-8")
    print(f"wrote {PARSER_PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
