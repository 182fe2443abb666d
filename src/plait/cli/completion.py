"""`plait completion bash|zsh|fish`: the argparse tree of every command → a shell completion script on stdout.

The tree is recorded while each command registers its options (a parser
subclass that keeps what `add_argument`/`add_parser` return), so the scripts
never drift from the real options and nothing reads argparse's internals.
One model, three small renderers: shtab covers bash and zsh but not fish.

    eval "$(plait completion bash)"                                 # ~/.bashrc
    plait completion zsh > "${fpath[1]}/_plait"                     # zsh
    plait completion fish > ~/.config/fish/completions/plait.fish   # fish
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from importlib import import_module

from plait.cli import EXIT_OK

SHELLS = ("bash", "zsh", "fish")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell", choices=SHELLS, help="the shell to write a completion script for")
    parser.epilog = (
        'bash: eval "$(plait completion bash)" in ~/.bashrc; zsh: plait completion zsh > "${fpath[1]}/_plait"; '
        "fish: plait completion fish > ~/.config/fish/completions/plait.fish"
    )


def run(args: argparse.Namespace) -> int:
    script = RENDERERS[args.shell](tree())
    print(script, end="")
    return EXIT_OK


# --- the model ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Option:
    flags: tuple[str, ...]
    help: str
    #: Values to offer after the flag; None = takes no value; () = takes a free value (or a file).
    values: tuple[str, ...] | None
    files: bool = False


@dataclass(slots=True)
class Command:
    name: str
    help: str
    options: list[Option] = field(default_factory=list)
    #: Choices for the positional arguments (e.g. the shell names); empty = complete file names.
    positional: tuple[str, ...] = ()
    takes_files: bool = False
    commands: list[Command] = field(default_factory=list)


class _Recorder(argparse.ArgumentParser):
    """An ArgumentParser that remembers the actions and sub-parsers it is given (public return values only)."""

    def __init__(self, *args, **kwargs) -> None:
        self.recorded: list[argparse.Action] = []
        self.children: list[tuple[str, str, _Recorder]] = []
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs):
        action = super().add_argument(*args, **kwargs)
        self.recorded.append(action)
        return action

    def add_argument_group(self, *args, **kwargs):
        return self._recording(super().add_argument_group(*args, **kwargs))

    def add_mutually_exclusive_group(self, *args, **kwargs):
        return self._recording(super().add_mutually_exclusive_group(*args, **kwargs))

    def _recording(self, group):
        add = group.add_argument

        def add_argument(*args, **kwargs):
            action = add(*args, **kwargs)
            self.recorded.append(action)
            return action

        group.add_argument = add_argument
        return group

    def add_subparsers(self, **kwargs):
        action = super().add_subparsers(**kwargs)
        add = action.add_parser

        def add_parser(name, **options):
            parser = add(name, **options)
            self.children.append((name, options.get("help") or options.get("description") or "", parser))
            return parser

        action.add_parser = add_parser
        return action


def tree() -> Command:
    """Every command of `plait`, with its options, as registered."""
    from plait.cli import COMMANDS

    root = _Recorder(prog="plait")
    root.add_argument("-V", "--version", action="store_true", help="print the version and exit")
    sub = root.add_subparsers(dest="command")
    for name, summary in COMMANDS.items():
        module = import_module(f"plait.cli.{name.replace('-', '_')}")
        module.register(sub.add_parser(name, help=summary))
    return _command("plait", "plait", root)


def _command(name: str, summary: str, parser: _Recorder) -> Command:
    out = Command(name, _short(summary))
    for action in parser.recorded:
        if action.option_strings:
            takes = action.nargs != 0
            values = tuple(map(str, action.choices)) if takes and action.choices else (() if takes else None)
            files = takes and not action.choices and _is_path(action)
            out.options.append(Option(tuple(action.option_strings), _short(action.help or ""), values, files))
        elif action.choices and not isinstance(action.choices, dict):
            out.positional = tuple(map(str, action.choices))
        elif not action.choices:
            out.takes_files = out.takes_files or _is_path(action)
    out.commands = [_command(child, help_, p) for child, help_, p in parser.children]
    return out


def _is_path(action: argparse.Action) -> bool:
    words = f"{action.metavar or ''} {action.dest}".upper()
    return any(w in words for w in ("PATH", "FILE", "DIR", "SPEC")) or getattr(action.type, "__name__", "") == "Path"


def _short(text: str) -> str:
    """The help's first clause, one line, at most 70 characters (what a completion menu has room for)."""
    text = " ".join(text.replace("%(default)s", "").split())
    text = re.split(r"(?<=[.;])\s", text)[0].rstrip(".;")
    return text if len(text) <= 70 else text[:69] + "…"


def _walk(command: Command, path: tuple[str, ...] = ()):
    path = (*path, command.name)
    yield path, command
    for child in command.commands:
        yield from _walk(child, path)


# --- bash ----------------------------------------------------------------------------------------------


def bash(root: Command) -> str:
    transitions = []
    cases = []
    values = []
    for path, command in _walk(root):
        key = " ".join(path)
        for child in command.commands:
            transitions.append(f'      "{key} {child.name}") cmd="$cmd $w" ;;')
        opts = " ".join(flag for o in command.options for flag in o.flags)
        words = " ".join([c.name for c in command.commands] or list(command.positional))
        files = "1" if command.takes_files else ""
        cases.append(f'    "{key}") opts="{opts}"; words="{words}"; files="{files}" ;;')
        for o in command.options:
            if o.values is None:
                continue
            reply = (
                f'COMPREPLY=($(compgen -W "{" ".join(o.values)}" -- "$cur"))'
                if o.values
                else 'COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null'
                if o.files
                else "COMPREPLY=()"
            )
            for flag in o.flags:
                values.append(f'    "{key} {flag}") {reply}; return ;;')
    return f"""# bash completion for plait (generated by `plait completion bash`; regenerate after upgrading)
_plait() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  local cmd="plait" w i opts words files
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${{COMP_WORDS[i]}}"
    case "$cmd $w" in
{chr(10).join(transitions)}
    esac
  done
  case "$cmd $prev" in
{chr(10).join(values)}
  esac
  case "$cmd" in
{chr(10).join(cases)}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [[ -n "$words" ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  elif [[ -n "$files" ]]; then
    COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null
  else
    COMPREPLY=()
  fi
}}
complete -F _plait plait
"""


# --- zsh -----------------------------------------------------------------------------------------------


SEP = " \\\n    "


def _zsh_text(text: str, colon: bool = True) -> str:
    """Quoted for a '...' word; `:` escaped where it would end a `_describe` name (not inside `[...]`)."""
    text = text.replace("\\", "\\\\").replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]")
    return text.replace(":", "\\:") if colon else text


def zsh(root: Command) -> str:
    functions = []
    for path, command in _walk(root):
        name = "_" + "_".join(p.replace("-", "_") for p in path)
        specs = []
        for o in command.options:
            value = ""
            if o.values:
                value = f":value:({' '.join(o.values)})"
            elif o.values is not None:
                value = ":file:_files" if o.files else ":value: "
            described = f"[{_zsh_text(o.help, colon=False)}]{value}'"
            if len(o.flags) > 1:  # `'(-q --quiet)'{-q,--quiet}'[help]'`: either spelling, once
                specs.append(f"'({' '.join(o.flags)})'{{{','.join(o.flags)}}}'{described}")
            else:
                specs.append(f"'{o.flags[0]}{described}")
        if command.commands:
            described = " ".join(f"'{c.name}:{_zsh_text(c.help)}'" for c in command.commands)
            specs += ["'1: :->command'", "'*:: :->args'"]
            dispatch = "\n".join(f"      {c.name}) {name}_{c.name.replace('-', '_')} ;;" for c in command.commands)
            body = f"""  local curcontext="$curcontext" state line
  typeset -A opt_args
  _arguments -C{SEP}{SEP.join(specs)}
  case $state in
    command) local -a commands; commands=({described}); _describe command commands ;;
    args) case $line[1] in
{dispatch}
    esac ;;
  esac"""
        else:
            if command.positional:
                specs.append(f"'1:value:({' '.join(command.positional)})'")
            elif command.takes_files:
                specs.append("'*:file:_files'")
            body = "  _arguments" + SEP + SEP.join(specs)
        functions.append(f"{name}() {{\n{body}\n}}\n")
    return (
        "#compdef plait\n# zsh completion for plait (generated by `plait completion zsh`)\n\n"
        + "\n".join(functions)
        + '\nif [[ "$funcstack[1]" = "_plait" ]]; then _plait "$@"; else compdef _plait plait; fi\n'
    )


# --- fish ----------------------------------------------------------------------------------------------


def _fish_text(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish(root: Command) -> str:
    lines = ["# fish completion for plait (generated by `plait completion fish`)", "complete -c plait -f"]
    for path, command in _walk(root):
        words = path[1:]
        below = [c.name for c in command.commands]
        # The condition: exactly this command path has been typed (and, for a group, no sub-command yet).
        seen = " ".join(f"; and __fish_seen_subcommand_from {w}" for w in words)
        not_yet = f"; and not __fish_seen_subcommand_from {' '.join(below)}" if below else ""
        condition = _fish_text(f"true{seen}{not_yet}") if words or below else None
        if not words:
            condition = _fish_text(f"__fish_use_subcommand{not_yet}") if below else None
        where = f" -n {condition}" if condition else ""
        for child in command.commands:
            lines.append(f"complete -c plait{where} -a {child.name} -d {_fish_text(child.help)}")
        for o in command.options:
            flags = " ".join(f"-l {f[2:]}" if f.startswith("--") else f"-s {f[1:]}" for f in o.flags)
            value = ""
            if o.values:
                value = f" -x -a {_fish_text(' '.join(o.values))}"
            elif o.values is not None:
                value = " -r -F" if o.files else " -x"
            lines.append(f"complete -c plait{where} {flags} -d {_fish_text(o.help)}{value}")
        if command.positional:
            lines.append(f"complete -c plait{where} -a {_fish_text(' '.join(command.positional))}")
        elif command.takes_files and words:
            lines.append(f"complete -c plait{where} -F")
    return "\n".join(lines) + "\n"


RENDERERS = {"bash": bash, "zsh": zsh, "fish": fish}
