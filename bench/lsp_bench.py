"""`plait lsp` latency: one keystroke in a 1,000-line spec → its diagnostics, against in-process `plait check`.

The reference is `plait check SPEC` run in-process (the CLI's `main`, output
captured) on the same spec, in the same run. The server is the real one,
started as `python -m plait lsp` and driven over stdio by pygls's client: each
sample inserts (or deletes) one character in a comment of the main file as an
incremental change, after a pause longer than the server's coalescing window,
and times until the file's diagnostics arrive. That is the latency a user sees
(JSON-RPC, the server's re-check, the reply). Two layouts: the 1,000 lines in
one file, and the same spec split into a main file that imports nine others
(the edit is in the main file; the server parses only that one again). The
in-process figure (`Workspace` + `ide.document`, no protocol) is shown too.

Reference and server samples are interleaved (a reference check, then a
keystroke, and so on), so both see the same load on a shared machine. Medians
of `--runs` samples each; the ratio is the server's median over the
reference's median.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import frontend_gen  # noqa: E402
from frontend_bench import machine  # noqa: E402

MARK = "# (end of group 0)"


def one_file(folder: Path, lines: int) -> Path:
    path = folder / "single" / "spec.plait"
    path.parent.mkdir()
    path.write_text(frontend_gen.spec(lines))
    return path


def split(folder: Path, lines: int, parts: int = 10) -> Path:
    """The same declarations over `parts` files: main.plait holds group 0 and `chain main`, and imports the rest."""
    groups = max(parts, lines // frontend_gen.GROUP_LINES)
    chunks = [[i for i in range(groups) if i % parts == p] for p in range(parts)]
    root = folder / "split"
    root.mkdir()
    imports = "".join(f'import "part{p}.plait"\n' for p in range(1, parts))
    for p in range(1, parts):
        (root / f"part{p}.plait").write_text("".join(frontend_gen.group(i) for i in chunks[p]))
    chain = " -> ".join(f"c{i}" for i in range(groups))
    main = root / "main.plait"
    main.write_text(
        f"plait 0.1\n{imports}\n" + "".join(frontend_gen.group(i) for i in chunks[0]) + f"chain main = {chain}\n"
    )
    return main


def check_in_process(path: Path) -> float:
    from plait.cli import main

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(["check", str(path)])
    elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"plait check {path} exited {code}: the bench spec must be clean")
    return elapsed


def in_process(path: Path, runs: int) -> tuple[float, float]:
    """Median in-process re-check after one keystroke, and the median reference check interleaved with it."""
    from plait.ide import analysis as ide
    from plait.ide.workspace import Workspace

    text = path.read_text()
    ws = Workspace()
    ws.set(path, text)
    ide.document(ws, str(path))
    samples, references = [], []
    for n in range(runs):
        references.append(check_in_process(path))
        edited = text.replace(MARK, MARK + "x") if n % 2 == 0 else text
        start = time.perf_counter()
        ws.set(path, edited)
        analysis = ide.document(ws, str(path))
        samples.append(time.perf_counter() - start)
        assert not analysis.diagnostics[str(path)], analysis.diagnostics[str(path)]
    return statistics.median(samples), statistics.median(references)


async def over_stdio(path: Path, runs: int) -> tuple[float, float]:
    """Median keystroke → diagnostics latency of the server, and the median reference check interleaved with it."""
    from lsprotocol import types as lsp
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("lsp-bench", "1")
    uri = path.as_uri()
    arrived: asyncio.Queue[float] = asyncio.Queue()

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: lsp.PublishDiagnosticsParams) -> None:
        if params.uri == uri:
            arrived.put_nowait(time.perf_counter())

    await client.start_io(sys.executable, "-m", "plait", "lsp", "--stdio")
    await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
    client.initialized(lsp.InitializedParams())
    text = path.read_text()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="plait", version=1, text=text)
        )
    )
    await asyncio.wait_for(arrived.get(), 60)
    offset = text.index(MARK) + len(MARK)
    line = text.count("\n", 0, offset)
    at = lsp.Position(line=line, character=offset - (text.rfind("\n", 0, offset) + 1))
    samples, references = [], []
    check_in_process(path)  # warm: imports, tables
    for n in range(runs + 1):
        if n:
            references.append(check_in_process(path))
        await asyncio.sleep(0.3)  # a pause in typing: past the server's coalescing window
        insert = n % 2 == 0
        end = at if insert else lsp.Position(line=at.line, character=at.character + 1)
        change = lsp.TextDocumentContentChangePartial(range=lsp.Range(start=at, end=end), text="x" if insert else "")
        while not arrived.empty():
            arrived.get_nowait()
        start = time.perf_counter()
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=n + 2), content_changes=[change]
            )
        )
        done = await asyncio.wait_for(arrived.get(), 60)
        if n:  # the first change warms the server's caches of the edited text's neighbours
            samples.append(done - start)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return statistics.median(samples), statistics.median(references)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1024, help="spec size (16 groups of 64 lines: 1,027 lines)")
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args(argv)
    print(machine())
    print(f"uptime: {os.popen('uptime').read().strip()}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for label, path in (
            ("one file", one_file(folder, args.lines)),
            ("main + 9 imports", split(folder, args.lines)),
        ):
            server, ref = asyncio.run(over_stdio(path, args.runs))
            inproc, ref2 = in_process(path, args.runs)
            total = sum(len(p.read_text().splitlines()) for p in path.parent.glob("*.plait"))
            print(
                f"{label:>17} ({total} lines): keystroke → diagnostics over stdio {server * 1000:6.1f} ms "
                f"vs plait check in-process {ref * 1000:6.1f} ms = {server / ref:.2f}x | "
                f"in-process re-check {inproc * 1000:6.1f} ms vs {ref2 * 1000:6.1f} ms = {inproc / ref2:.2f}x"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
