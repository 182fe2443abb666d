"""plait.toml or pyproject.toml `[tool.plait]` → ProjectConfig (what `plait check` reports, where).

Found as ruff finds its configuration: walking up from the checked path, the
first directory holding a `plait.toml`, or a `pyproject.toml` with a
`[tool.plait]` table, wins (`plait.toml` first in one directory). `--config`
names the file instead. Globs are relative to the config file's directory.
Bad configuration is a ConfigError naming the file and the key, never a traceback.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from plait.core.record import Record, record

__all__ = [
    "ALWAYS_REPORTED",
    "KEYS",
    "ConfigError",
    "ProjectConfig",
    "Resolver",
    "find",
    "load",
    "matches",
    "nearest",
    "reported",
    "selectors",
]

#: key -> what it holds (for the "unknown key" message and docs/integrations.md).
KEYS = {
    "select": "list of codes or prefixes to report",
    "ignore": "list of codes or prefixes never to report",
    "strict": "true: warnings fail the check",
    "per-file-ignores": "table: glob -> list of codes ignored in matching files",
    "exclude": "list of globs of files and folders a directory search skips",
}


#: File and syntax problems (P0xx) cannot be filtered away: nothing else is checked without them.
ALWAYS_REPORTED = "P0"


class ConfigError(ValueError):
    """A configuration that cannot be used; the message starts with the file (and key)."""


@record(kw_only=False)
class ProjectConfig(Record):
    #: The file this came from; None = no configuration found (the defaults).
    path: Path | None
    #: The directory globs are relative to.
    root: Path
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    strict: bool = False
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()

    def ignored_in(self, file: str | Path) -> tuple[str, ...]:
        """The codes `per-file-ignores` silences in `file`."""
        return tuple(code for glob, codes in self.per_file_ignores if matches(glob, file, self.root) for code in codes)

    def excludes(self, path: str | Path) -> bool:
        return any(matches(glob, path, self.root) for glob in self.exclude)


class Resolver:
    """The configuration of each file: `--config`'s for all, or the nearest one (looked up once per folder)."""

    def __init__(self, explicit: Path | None = None) -> None:
        self._fixed = load(explicit) if explicit is not None else None
        self._files: dict[Path, ProjectConfig] = {}
        self._folders: dict[Path, ProjectConfig] = {}

    def of(self, path: str | Path) -> ProjectConfig:
        if self._fixed is not None:
            return self._fixed
        folder = Path(path).absolute().parent
        if folder not in self._folders:
            self._folders[folder] = nearest(folder, self._files)
        return self._folders[folder]


def reported(diagnostics, configs: Resolver, select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> list:
    """The diagnostics to show: `select` (the command line's) replaces the config's, `ignore` adds to it."""
    kept = []
    for d in diagnostics:
        config = configs.of(d.span.file)
        chosen = select or config.select
        ignored = ignore + config.ignore + config.ignored_in(d.span.file)
        code = d.code
        if code.startswith(ALWAYS_REPORTED) or (
            (not chosen or code.startswith(chosen)) and not (ignored and code.startswith(ignored))
        ):
            kept.append(d)
    return kept


def matches(glob: str, path: str | Path, root: Path) -> bool:
    """`glob` matches the path relative to root, one of its parent folders, or (a glob without `/`) one of its names."""
    full = Path(path).absolute()
    try:
        parts = PurePosixPath(full.relative_to(root.absolute()).as_posix()).parts
    except ValueError:  # outside the project: only a bare name can match
        parts = (full.name,)
    glob = glob.strip("/")
    if "/" not in glob:
        return any(fnmatchcase(part, glob) for part in parts)
    return any(fnmatchcase("/".join(parts[: i + 1]), glob) for i in range(len(parts)))


def find(start: Path) -> Path | None:
    """The configuration file governing `start` (a file or a folder), or None."""
    folder = start.absolute()
    if not _is_dir(folder):
        folder = folder.parent
    for directory in (folder, *folder.parents):
        own = directory / "plait.toml"
        if own.is_file():
            return own
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and _has_plait_table(pyproject):
            return pyproject
    return None


def nearest(start: Path, cache: dict[Path, ProjectConfig]) -> ProjectConfig:
    """The configuration for `start`, loaded once per file."""
    path = find(start)
    if path is None:
        return ProjectConfig(path=None, root=Path.cwd())
    if path not in cache:
        cache[path] = load(path)
    return cache[path]


def load(path: Path) -> ProjectConfig:
    """Read and validate one configuration file; `[tool.plait]` for a pyproject.toml, the whole file otherwise."""
    data = _read(path)
    where = str(path)
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("plait", {})
        where += ": [tool.plait]"
    else:
        table = data
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    for key in table:
        if key not in KEYS:
            known = ", ".join(f"`{k}`" for k in KEYS)
            hint = f" (did you mean `{key.replace('_', '-')}`?)" if key.replace("_", "-") in KEYS else ""
            raise ConfigError(f"{where}: unknown key `{key}`{hint}; plait knows {known}")
    strict = table.get("strict", False)
    if not isinstance(strict, bool):
        raise ConfigError(f"{where}: `strict` must be true or false")
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{where}: `per-file-ignores` must be a table of glob = [codes]")
    return ProjectConfig(
        path=path,
        root=path.parent,
        select=selectors(_strings(table, "select", where), f"{where}: `select`"),
        ignore=selectors(_strings(table, "ignore", where), f"{where}: `ignore`"),
        strict=strict,
        per_file_ignores=tuple(
            (glob, selectors(_strings(per_file, glob, f"{where}: `per-file-ignores`"), f"{where}: `per-file-ignores`"))
            for glob in per_file
        ),
        exclude=_strings(table, "exclude", where),
    )


def selectors(items: tuple[str, ...] | list[str], where: str) -> tuple[str, ...]:
    """("P1", "undefined-name") → ("P1", "P101"); a selector matching no code is a ConfigError naming `where`."""
    from plait.core.codes import declared, lookup

    out = []
    for raw in items:
        item = raw.strip()
        if not item:
            continue
        entry = lookup(item)
        prefix = entry.code if entry else item.upper()
        if not any(code.startswith(prefix) for code in declared()):
            raise ConfigError(f"{where}: `{item}` matches no code; `plait explain --list` shows them all")
        out.append(prefix)
    return tuple(out)


def _strings(table: dict, key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if isinstance(value, str):  # `select = "P1"` is what a user means by a one-item list
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return tuple(value)


def _read(path: Path) -> dict:
    import tomllib  # only when a config file exists: a fifth of `plait check`'s imports otherwise

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def _has_plait_table(path: Path) -> bool:
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        # Another tool's broken pyproject.toml is not plait's to report unless it has our table.
        return "[tool.plait]" in _text(path)
    return isinstance(data.get("tool"), dict) and "plait" in data["tool"]


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False
