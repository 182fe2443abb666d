"""Install this working tree somewhere new without the network: what the pre-commit and Action tests share.

A copy of the working tree (tracked and new files, as `git ls-files` lists them) committed into a fresh git
repository stands for "this repo". pip is kept off the network (no index, no config, a proxy that refuses)
and finds plait's dependencies and build backend already installed in this venv through PYTHONPATH, so
`pip install <repo>` builds plait itself from source and installs nothing else.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REFUSED = "http://127.0.0.1:9"  # the discard port: any attempt to reach the network fails at once


def git(*args: str, cwd: Path) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip()


def snapshot(target: Path) -> str:
    """This working tree copied to `target` and committed there; returns the commit id."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=REPO,
            capture_output=True,
            check=True,
            timeout=120,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    git("init", "-q", cwd=target)
    git("add", "-A", cwd=target)
    git("commit", "-q", "-m", "snapshot", cwd=target)
    return git("rev-parse", "HEAD", cwd=target)


def offline_env(home: Path) -> dict[str, str]:
    """An environment in which pip and pre-commit work from this venv's packages and cannot reach the network."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUALENV_", "PRE_COMMIT"))}
    env.update(
        PIP_NO_INDEX="1",
        PIP_CONFIG_FILE=os.devnull,
        # pip reads a `--no-X` flag's variable as the value of X: "0" here means *no* build isolation.
        PIP_NO_BUILD_ISOLATION="0",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PYTHONPATH=os.pathsep.join(site.getsitepackages()),
        VIRTUALENV_NO_PERIODIC_UPDATE="1",
        PRE_COMMIT_HOME=str(home / "pre-commit-cache"),
        HOME=str(home),
        http_proxy=REFUSED,
        https_proxy=REFUSED,
        HTTP_PROXY=REFUSED,
        HTTPS_PROXY=REFUSED,
        no_proxy="",
        NO_PROXY="",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
    )
    return env
