"""PLAIT_TEST_PG, or a throwaway PostgreSQL server started from the Debian binaries → a postgresql:// URL for tests.

`server()` is what the session fixture uses: the URL in PLAIT_TEST_PG when it is
set; else a server of its own (initdb into a temporary directory, on a free
loopback port, password authentication over TCP), stopped by `stop()`; else
None, and the tests that need it skip (under CI a skip fails: CI installs the
`postgresql` package, so the binaries are there).

initdb and postgres refuse to run as root: as root the cluster belongs to the
`postgres` user the Debian package creates (or `nobody`), and every command runs
through `runuser`. The throwaway server runs with fsync off: the tests check what
other connections see after a commit or a killed client, not survival of a power cut.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Server", "server"]

USER = "plait"
PASSWORD = "test-secret-pw"


@dataclass
class Server:
    url: str
    #: Set when this process started the server (and must stop it).
    data: Path | None = None
    bindir: Path | None = None
    runas: str | None = None

    def stop(self) -> None:
        if self.data is None or self.bindir is None:
            return
        _run(
            self.runas,
            [str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"],
            check=False,
        )
        shutil.rmtree(self.data.parent, ignore_errors=True)


def bindir() -> Path | None:
    """The newest Debian PostgreSQL binaries (/usr/lib/postgresql/N/bin), or initdb on PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def server() -> Server | None:
    url = os.environ.get("PLAIT_TEST_PG")
    if url:
        return Server(url)
    bins = bindir()
    if bins is None:
        return None
    runas = None
    if os.geteuid() == 0:
        runas = next((u for u in ("postgres", "nobody") if _user(u)), None)
        if runas is None:
            return None
    root = Path(tempfile.mkdtemp(prefix="plait-pg-"))
    data = root / "data"
    pwfile = root / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if runas is not None:
        entry = pwd.getpwnam(runas)
        os.chown(root, entry.pw_uid, entry.pw_gid)
        os.chown(pwfile, entry.pw_uid, entry.pw_gid)
    init = [
        str(bins / "initdb"),
        "-D",
        str(data),
        "-U",
        USER,
        f"--pwfile={pwfile}",
        "--auth-local=trust",
        "--auth-host=scram-sha-256",
        "-E",
        "UTF8",
        "--no-sync",
    ]
    _run(runas, init)
    port = _free_port()
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {root} -c fsync=off -c full_page_writes=off"
    started = _run(
        runas,
        [str(bins / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "-t", "30", "start"],
        check=False,
    )
    if started.returncode != 0:
        log = (root / "log").read_text() if (root / "log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"the test PostgreSQL server did not start: {started.stderr}{log}")
    return Server(f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{port}/postgres", data, bins, runas)


def _user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _run(runas: str | None, argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    if runas is not None:
        argv = ["runuser", "-u", runas, "--", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/")
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return done


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":  # start one by hand: prints the URL, stops on Enter
    started = server()
    if started is None:
        raise SystemExit("no PostgreSQL binaries found")
    print(started.url, flush=True)
    try:
        input()
    finally:
        started.stop()
