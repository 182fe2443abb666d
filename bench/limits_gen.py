"""Benchmark and test inputs: hostile specs under the 8 MiB cap, one shape each, and a normal spec of a size.

The shapes are the ones issue reports named (a long list of numbers, blank lines, a long list of strings,
a prompt of hundreds of thousands of template reads) and a few other dense ones (nested lists, blocks,
calls, dotted paths and attributes, one item each in a few bytes), and shapes that stress the passes after the
parser (one chain element or tool used a million times, an agent per line, an undefined name per agent). `tests/security/test_input_limits.py`
checks some in a child process under 1 GiB; `bench/limits_bench.py` times them against `normal(size)`.
"""

from __future__ import annotations

import frontend_gen

_HEAD = 'model m = "openai/gpt-4o-mini"\nagent main "A." {\n  model = m\n'

#: Item text of the dense list shapes: one item per few bytes, inside `attributes = { xs = [...] }`.
_ITEMS = {
    "numbers": "7",
    "strings": '"ab"',
    "refs": "a",
    "nested-lists": "[7]",
    "blocks": "{}",
    "calls": "f()",
    "paths": "a.b",
}


def hostile(kind: str, size: int) -> str:
    """A spec of about `size` bytes (never more) of one shape."""
    if kind in _ITEMS:
        item = _ITEMS[kind]
        count = (size - 200) // (len(item) + 1)
        return _HEAD + "  attributes = { xs = [" + ",".join([item] * count) + "] }\n}\n"
    if kind == "blank-lines":
        return _HEAD + "\n" * (size - 100) + "}\n"
    if kind == "nested-calls":
        count = (size - 200) // 6  # `{{a}} `: 666,000 unresolved reads in 4 MB
        return _HEAD + '  system = "' + "{{a}} " * count + '"\n}\n'
    if kind == "attributes":
        count = (size - 200) // 4
        return _HEAD + "  attributes = {" + "a=1," * count + "}\n}\n"
    if kind == "chain":  # 1.6M uses of one agent: past the reference limit (P009)
        return _HEAD + "}\nchain c = " + " -> ".join(["main"] * ((size - 200) // 8)) + "\n"
    if kind == "tools":  # one tool listed over and over: a P306 each, past the problem limit (P008)
        return _HEAD + "  tools = [t" + ", t" * ((size - 200) // 3) + ']\n}\nagent t "T." { model = m }\n'
    if kind == "agents":  # one small agent per line: a graph node each
        return _agents(size, "")
    if kind == "undefined":  # as many undefined names as agents: a "did you mean" over all of them, each
        per = 36  # `agent a1234 { model = m }\n` and `x1234, `
        return _agents(size * 26 // per, "x")
    raise ValueError(kind)


def _agents(size: int, undefined: str) -> str:
    count, lines = 0, [_HEAD + "}\n"]
    used = len(lines[0]) + 100
    while used < size - 100:
        line = f"agent a{count} {{ model = m }}\n"
        lines.append(line)
        used += len(line) + (len(f"{undefined}{count}, ") if undefined else 0)
        count += 1
    if undefined:
        lines.append(f"agent b {{ model = m, tools = [{', '.join(f'{undefined}{i}' for i in range(count))}] }}\n")
    return "".join(lines)


def normal(size: int) -> str:
    """A valid spec of about `size` bytes, the shape a person writes (the front-end benchmark's groups)."""
    per_line = len(frontend_gen.spec(6400).encode()) / 6400
    text = frontend_gen.spec(int(size / per_line))
    while len(text.encode()) > size:  # the estimate may overshoot by a group
        text = frontend_gen.spec(int(len(text.splitlines()) * size / len(text.encode())) - 64)
    return text
