"""Diagnostic codes → their names, severities and documentation (`plait explain`).

Codes are stable: a code is never reused for a different problem. P0xx files
and syntax, P1xx names, P2xx attributes and types, P3xx graph shape and
contracts, P4xx templates, P5xx secrets, P6xx lint warnings.
"""

from __future__ import annotations

import re
from dataclasses import replace

from plait.core.diagnostics import Diagnostic, Fix, Label, Severity
from plait.core.record import Record, record
from plait.core.source import Span

__all__ = ["CODES", "SECTIONS", "Code", "lookup", "make", "sections"]


@record(kw_only=False)
class Code(Record):
    code: str
    name: str
    severity: Severity
    summary: str
    #: Longer documentation: what, why, example, fix (markdown-ish text).
    explanation: str = ""


E, W = Severity.ERROR, Severity.WARNING

CODES: dict[str, Code] = {
    c.code: c
    for c in (
        Code("P001", "syntax-error", E, "the text does not follow the grammar"),
        Code("P002", "invalid-token", E, "a character or literal the lexer cannot read"),
        Code("P003", "invalid-escape", E, "a string escape that is not a JSON escape"),
        Code("P004", "nesting-too-deep", E, "brackets nested deeper than the parser allows"),
        Code("P005", "unreadable-file", E, "a spec file that cannot be read as UTF-8 text"),
        Code("P006", "import-outside-root", E, "an import that leaves the spec's directory"),
        Code("P007", "import-not-found", E, "an imported file that does not exist"),
        Code("P008", "too-many-problems", E, "more problems than a check lists (the rest are counted)"),
        Code("P009", "too-many-references", E, "a spec that uses declared names more often than a check follows"),
        Code("P101", "undefined-name", E, "a reference to a name nothing declares"),
        Code("P102", "duplicate-name", E, "two declarations with one name"),
        Code("P103", "wrong-kind", E, "a reference to a declaration of the wrong kind"),
        Code("P201", "unknown-attribute", E, "an attribute the declaration does not have"),
        Code("P202", "missing-attribute", E, "a required attribute is missing"),
        Code("P203", "wrong-type", E, "an attribute value of the wrong type"),
        Code("P204", "invalid-value", E, "a value of the right type that is not allowed"),
        Code("P205", "duplicate-attribute", E, "an attribute written twice in one block"),
        Code("P206", "bad-default", E, "a parameter default that does not match its type"),
        Code("P207", "unknown-type", E, "a parameter type that does not exist"),
        Code("P208", "duplicate-parameter", E, "two parameters with one name"),
        Code("P209", "malformed-output", E, "an `output` or `answer` with no fields, or a field with a default"),
        Code("P301", "until-not-a-tool", E, "`until` names a tool the agent does not have"),
        Code("P302", "model-unreachable", E, "a model the agent cannot reach"),
        Code("P303", "delegation-cycle", E, "an agent that can reach itself through `tools`"),
        Code("P304", "chain-cycle", E, "a chain or parallel that contains itself"),
        Code("P305", "too-few-agents", E, "a consolidate with fewer than two agents"),
        Code("P306", "tool-name-collision", E, "two tools an agent would see under one name"),
        Code("P307", "script-invalid", E, "a scripted model's replies file is missing or does not parse"),
        Code("P308", "route-subject-type", E, "a route on a value no case list can cover, without `else`"),
        Code("P309", "route-unknown-case", E, "a route case that is not a value of the subject's type"),
        Code("P310", "route-uncovered", E, "a value of a route's subject no case covers, without `else`"),
        Code("P311", "route-duplicate-case", E, "two cases of one route for the same value"),
        Code("P312", "loop-unbounded", E, "a loop without `max_iterations`"),
        Code("P313", "ill-typed-condition", E, "a loop `until` reading a missing field or comparing the wrong types"),
        Code("P314", "map-over-not-list", E, "a map `over` a path that is not a list"),
        Code("P315", "undeclared-state", E, "a `{{state.x}}` read the `state` block does not declare (0.2)"),
        Code("P316", "read-before-finished", E, "a `{{NAME}}` read where NAME has not finished on every path"),
        Code("P317", "python-module-not-found", E, "a python tool's module is not beside the spec nor installed"),
        Code("P318", "python-function-not-found", E, "a python tool's module defines no such function"),
        Code(
            "P319", "python-signature-mismatch", E, "a python function's type hints disagree with the tool's `params`"
        ),
        Code("P331", "mcp-server-invalid", E, "an mcp server without exactly one of `command` and `url`, or a bad one"),
        Code("P332", "mcp-lock-missing", W, "an mcp server with no `plait.lock` entry to check its tools against"),
        Code("P333", "mcp-lock-stale", W, "an mcp server declared differently from when it was locked"),
        Code("P334", "mcp-lock-invalid", E, "a `plait.lock` that cannot be read"),
        Code("P335", "mcp-unknown-tool", E, "a tool name the mcp server does not offer (per `plait.lock`)"),
        Code("P336", "mcp-tool-not-allowed", E, "an mcp tool its server's `tools` allow-list leaves out"),
        Code("P401", "unresolved-template", E, "a template path that cannot resolve"),
        Code("P402", "unknown-field", E, "a template path naming a field its record type does not declare"),
        Code("P501", "literal-secret", E, "a secret written into the spec"),
        Code("P601", "unused-declaration", W, "a declaration nothing uses"),
        Code("P610", "unused-suppression", W, "a `# plait: ignore[...]` comment that suppresses nothing"),
    )
}

# The documentation `plait explain` prints, in four sections each. Examples in
# ```plait blocks are real: the test suite compiles each "Example" and expects
# its code, and each "Fix" and expects the code gone.
_DOCS: dict[str, str] = {
    "P001": """
## What it catches
Text that does not follow the grammar: a missing `}`, `]` or `)`, two
attributes on one line without a comma, a keyword where a name belongs.
The message says what the parser expected and, for an unclosed block, which
declaration opened it.

## Why it matters
Nothing after a syntax error can be checked reliably, and nothing can run.
Only the first error of each top-level declaration is reported, so one
broken block does not bury the rest of the file.

## Example
```plait
model fast = "openai/gpt-4o-mini"
agent writer { model = fast system = "You write." }
```

## Fix
Separate attributes by a newline or a comma, and close every block.
```plait
model fast = "openai/gpt-4o-mini"
agent writer { model = fast, system = "You write." }
```
""",
    "P002": """
## What it catches
A character or literal that starts no token of the language: `@`, `$`, a
stray backtick, or a number glued to letters such as `12abc`.

## Why it matters
The lexer cannot continue past it, so the rest of the declaration is not
read. It is usually a typo or text pasted from elsewhere.

## Example
```plait
model fast = "openai/gpt-4o-mini" @ { temperature = 0.2 }
agent main { model = fast }
```

## Fix
Remove the character, or put the text inside a string.
```plait
model fast = "openai/gpt-4o-mini" { temperature = 0.2 }
agent main { model = fast }
```
""",
    "P003": """
## What it catches
A backslash escape in a string that JSON does not define, such as `\\q` or
`\\x41`. Strings use JSON escapes: `\\n`, `\\t`, `\\"`, `\\\\`, `\\uXXXX`; `\\{{`
writes literal template braces.

## Why it matters
An unknown escape has no agreed meaning: other tools would read the same
spec differently, so plait refuses to guess.

## Example
```plait
model fast = "openai/gpt-4o-mini"
agent writer { model = fast, system = "Use C:\\qdata for files." }
```

## Fix
Double the backslash to write one, or use the escape you meant.
```plait
model fast = "openai/gpt-4o-mini"
agent writer { model = fast, system = "Use C:\\\\qdata for files." }
```
""",
    "P004": """
## What it catches
Brackets (`{`, `[`, `(`) nested more than 64 deep.

## Why it matters
No real spec comes close to this depth; such input is generated or
malicious. The limit keeps parsing and checking bounded in time, memory and
stack depth whatever the input.

## Example
```text
model m = "openai/gpt-4o" { headers = [[[[[[[[[[[[[[[[[[[[ ... 10,000 deep ... ]]]]]]]]]]]]]]]]]]]] }
```

## Fix
Flatten the value. Attribute values in plait are at most a few levels
deep: a list of names, a map of strings, a `params` block.
""",
    "P005": """
## What it catches
A spec path that cannot be read as text: it does not exist, is a directory,
cannot be opened, is larger than 8 MB, is not valid UTF-8, or contains a NUL
byte (a binary file).

## Why it matters
There is nothing to check. The diagnostic names the file and, for an
encoding problem, the first bad byte, so the cause is found without a hex
editor.

## Example
```console
$ plait check specs/missing.plait
error[P005]: no such file `specs/missing.plait`
```

## Fix
Point `plait check` at an existing `.plait` file (or a directory holding
some), saved as UTF-8 text.
""",
    "P006": """
## What it catches
An `import` whose path leaves the directory `plait` was pointed at, such as
`import "../shared/models.plait"` or an absolute path.

## Why it matters
A spec must not be able to read arbitrary files of the machine it is checked
or run on. Keeping imports under one root also makes a spec directory
self-contained: copy it and it still works.

## Example
```text
# specs/main.plait
import "../common/models.plait"
```

## Fix
Move the imported file inside the spec's directory (or run `plait` on the
parent directory) and import it by a relative path.
```text
# specs/main.plait
import "common/models.plait"
```
""",
    "P007": """
## What it catches
An `import` of a file that does not exist, relative to the importing file.

## Why it matters
Every name the missing file would declare is undefined, so the rest of the
check would only report the consequences.

## Example
```text
# specs/main.plait, with no specs/tools.plait beside it
import "tools.plait"
```

## Fix
Correct the path (it is relative to the file that imports), or create the
file.
""",
    "P008": """
## What it catches
A check that found more than 1,000 problems. The first 1,000 are listed;
the rest are counted in this one, the last diagnostic, which points at the
first problem not listed. It is an error when any problem left out is an
error, else a warning.

## Why it matters
Such a spec is almost always generated, and holds the same few mistakes
many times (a tool listed 100,000 times, a chain of undeclared names). A
diagnostic each took minutes and gigabytes to print and said nothing the
first ones did not; the check's time and memory stay bounded instead.

## Example
```text
agent main { model = fast, tools = [search, search, search, ... 50,000 times] }
```
```console
$ plait check big.plait
error[P306]: agent `main` lists `search` twice in `tools`
... (1,000 problems)
error[P008]: 49,000 more problems (49,000 errors) found and not listed
```

## Fix
Fix the generator, or the problems listed, and check again: the next ones
are listed then.
""",
    "P009": """
## What it catches
A spec whose files use declared names (in `model`, `tools`, chain
elements, branches, cases and the like) more than 250,000 times in all.
The check reports undefined names and stops before building the graph.

## Why it matters
Every later check costs memory and time per use. The densest specs people
write use about 12,000 names per megabyte, so a spec under the 8 MB size
cap needs at most about 100,000; a generated one can hold over a million
(`chain c = a -> a -> ...`), which took more than a gigabyte to check.

## Example
```text
chain long = step1 -> step1 -> step1 -> ... 300,000 times
```

## Fix
Generate fewer repeats (a `loop` with `max_iterations` runs a body many
times), or split the spec into several.
""",
    "P101": """
## What it catches
A reference to a name that no declaration in the spec (or in the files it
imports) declares. Near misses get a suggestion: "did you mean `fast`?".

## Why it matters
The reference cannot be turned into a graph edge: the agent has no model to
call, the chain has no element to run.

## Example
```plait
model fast = "openai/gpt-4o-mini"
agent main { model = fsat }
```

## Fix
Use the declared name, or declare the missing one.
```plait
model fast = "openai/gpt-4o-mini"
agent main { model = fast }
```
""",
    "P102": """
## What it catches
Two declarations with the same name, in one file or across imported files.
All declarations share one namespace, whatever their kind.

## Why it matters
Every reference to the name would be ambiguous. The first declaration wins
for the rest of the check, and the second is reported with a label at the
first.

## Example
```plait
model fast = "openai/gpt-4o-mini"
agent writer { model = fast }
agent writer { model = fast, system = "You write briefings." }
```

## Fix
Rename one of them (and its references), or merge the two.
```plait
model fast = "openai/gpt-4o-mini"
agent writer { model = fast, system = "You write briefings." }
```
""",
    "P103": """
## What it catches
A reference to a declaration of the wrong kind: an agent where a model is
expected, a model in `tools`, a tool in a chain.

## Why it matters
Each attribute takes specific kinds (`model` takes a model; `tools` takes
tools and agents; chain elements are runnables). Anything else has no
meaning at run time.

## Example
```plait
model fast = "openai/gpt-4o-mini"
agent researcher { model = fast }
agent main { model = researcher }
```

## Fix
Reference a declaration of the expected kind. To let an agent use another
agent, list it in `tools`.
```plait
model fast = "openai/gpt-4o-mini"
agent researcher "Looks things up." { model = fast }
agent main { model = fast, tools = [researcher] }
```
""",
    "P201": """
## What it catches
An attribute the declaration does not have, usually a typo
(`max_stepz`) or an attribute of another kind (`prompt` on an agent).
The note lists the attributes the declaration accepts.

## Why it matters
An unknown attribute would be silently ignored, and the setting you wrote
would never take effect.

## Example
```plait
model fast = "openai/gpt-4o-mini"
agent main { model = fast, max_stepz = 4 }
```

## Fix
Spell the attribute as documented, or remove it.
```plait
model fast = "openai/gpt-4o-mini"
agent main { model = fast, max_steps = 4 }
```
""",
    "P202": """
## What it catches
A declaration without an attribute it needs: an agent or step without
`model`, a step without `prompt`, a tool without `run`, a consolidate without
`agents` or `judge`.

## Why it matters
There is no sensible default: an agent cannot choose its own model.

## Example
```plait
agent main { system = "You answer questions." }
```

## Fix
Add the attribute.
```plait
model fast = "openai/gpt-4o-mini"
agent main { model = fast, system = "You answer questions." }
```
""",
    "P203": """
## What it catches
An attribute value of the wrong type: a string for a number, a name for a
duration, a single name where a list is expected, a malformed call such as
`python()` without its target.

## Why it matters
The runtime would fail, or worse, coerce the value into something you did
not mean (`"30"` seconds is not `30s`).

## Example
```plait
model fast = "openai/gpt-4o-mini" { temperature = "low" }
agent main { model = fast }
```

## Fix
Write a value of the type the message names.
```plait
model fast = "openai/gpt-4o-mini" { temperature = 0.2 }
agent main { model = fast }
```
""",
    "P204": """
## What it catches
A value of the right type that is not allowed: a number out of range
(`temperature = 3`), an unknown provider, an HTTP method that does not
exist, a word outside an attribute's choices.

## Why it matters
Providers reject such values on the first call, after the run has started
and perhaps spent money on earlier steps.

## Example
```plait
model fast = "openai/gpt-4o-mini" { temperature = 3 }
agent main { model = fast }
```

## Fix
Use a value inside the documented range or set of choices.
```plait
model fast = "openai/gpt-4o-mini" { temperature = 1.2 }
agent main { model = fast }
```
""",
    "P205": """
## What it catches
An attribute (or a `params` block) written twice in one block.

## Why it matters
Only one value can apply, and which one was meant is unclear. Silently
keeping the last would hide an editing mistake.

## Example
```plait
model fast = "openai/gpt-4o-mini" { temperature = 0.2, temperature = 0.7 }
agent main { model = fast }
```

## Fix
Keep one of them.
```plait
model fast = "openai/gpt-4o-mini" { temperature = 0.2 }
agent main { model = fast }
```
""",
    "P206": """
## What it catches
A tool parameter whose default value does not have the parameter's type:
`limit: int = "five"`, `units: "metric" | "imperial" = "kelvin"`.

## Why it matters
Parameters compile to JSON Schema. The default is used when the model leaves
the argument out, so the tool would receive a value its own schema forbids.

## Example
```plait
model fast = "openai/gpt-4o-mini"
tool lookup "Look up a topic." {
  params {
    topic: string
    limit: int = "five"
  }
  run = python("kb:lookup")
}
agent main { model = fast, tools = [lookup] }
```

## Fix
Make the default match the type.
```plait
model fast = "openai/gpt-4o-mini"
tool lookup "Look up a topic." {
  params {
    topic: string
    limit: int = 5
  }
  run = python("kb:lookup")
}
agent main { model = fast, tools = [lookup] }
```
""",
    "P207": """
## What it catches
A parameter type that does not exist. Types are `string`, `int`, `float`,
`bool`, `list[T]`, `object { ... }`, literal unions (`"a" | "b"`) and
optional `T?`.

## Why it matters
The parameter cannot be compiled to JSON Schema, so the model would not
know what to send.

## Example
```plait
model fast = "openai/gpt-4o-mini"
tool lookup "Look up a topic." {
  params {
    topic: str
  }
  run = python("kb:lookup")
}
agent main { model = fast, tools = [lookup] }
```

## Fix
Use one of the types above.
```plait
model fast = "openai/gpt-4o-mini"
tool lookup "Look up a topic." {
  params {
    topic: string
  }
  run = python("kb:lookup")
}
agent main { model = fast, tools = [lookup] }
```
""",
    "P208": """
## What it catches
Two parameters with one name in a tool's `params` (or in one `object { ... }`).

## Why it matters
A JSON Schema object has one property per name; the model could only ever
send one of the two.

## Example
```plait
model fast = "openai/gpt-4o-mini"
tool lookup "Look up a topic." {
  params {
    topic: string
    topic: int
  }
  run = python("kb:lookup")
}
agent main { model = fast, tools = [lookup] }
```

## Fix
Rename or remove one of them.
```plait
model fast = "openai/gpt-4o-mini"
tool lookup "Look up a topic." {
  params {
    topic: string
    limit: int
  }
  run = python("kb:lookup")
}
agent main { model = fast, tools = [lookup] }
```
""",
    "P301": """
## What it catches
`until` naming a tool (or agent) that is not in the agent's own `tools`.

## Why it matters
`until` ends the run when the model calls that tool. If the model cannot see
the tool it can never call it, and the agent runs until `max_steps`.

## Example
```plait
model fast = "openai/gpt-4o-mini"
tool submit "Submit the report." { run = python("report:submit") }
agent main { model = fast, until = submit }
```

## Fix
Add the tool to `tools`, or name one that is there.
```plait
model fast = "openai/gpt-4o-mini"
tool submit "Submit the report." { run = python("report:submit") }
agent main { model = fast, tools = [submit], until = submit }
```
""",
    "P302": """
## What it catches
A model no call could reach: an `openai-compatible` model without
`base_url`, a `scripted` model without `script`, or `api = "responses"` on a
provider other than `openai`. Each agent, step or judge that would call it
is labelled.

## Why it matters
The first call to the model is certain to fail, so the run would fail at
that point every time. Better to know before it starts.

## Example
```plait
model local = "openai-compatible/llama3.1"
agent main { model = local }
```

## Fix
Give the model what it needs to be called.
```plait
model local = "openai-compatible/llama3.1" { base_url = "http://localhost:11434/v1" }
agent main { model = local }
```
""",
    "P303": """
## What it catches
An agent that can reach itself through `tools`: it delegates to itself,
or to an agent that delegates back (`a -> b -> a`). Every such cycle is
reported once, with a label at each delegation.

## Why it matters
Delegation is a nested run. A cycle lets the agents call each other
without end, multiplying cost until a budget stops them.

## Example
```plait
model fast = "openai/gpt-4o-mini"
agent planner "Plans the work." { model = fast, tools = [worker] }
agent worker "Does the work." { model = fast, tools = [planner] }
chain main = planner
```

## Fix
Make delegation go one way. The delegate answers; it does not call back.
```plait
model fast = "openai/gpt-4o-mini"
agent planner "Plans the work." { model = fast, tools = [worker] }
agent worker "Does the work." { model = fast }
chain main = planner
```
""",
    "P304": """
## What it catches
A chain or parallel that contains itself, directly (`chain c = a -> c`) or
through other chains and parallels.

## Why it matters
Composition is static: a chain that contains itself has infinite length
and can never be built or run.

## Example
```plait
model fast = "openai/gpt-4o-mini"
agent draft { model = fast }
chain main = draft -> main
```

## Fix
Remove the self-reference. For repetition, use an agent loop (`max_steps`,
`until`) or a `consolidate` with `rounds`.
```plait
model fast = "openai/gpt-4o-mini"
agent draft { model = fast }
chain main = draft
```
""",
    "P305": """
## What it catches
A `consolidate` with fewer than two agents.

## Why it matters
Consolidation compares several agents' answers and asks the judge whether
they agree. With one agent there is nothing to compare, and the judge's
rounds are wasted calls.

## Example
```plait
model fast = "openai/gpt-4o-mini"
agent analyst { model = fast }
consolidate main { agents = [analyst], judge = fast }
```

## Fix
Add a second agent, or run the single agent directly.
```plait
model fast = "openai/gpt-4o-mini"
agent analyst_a { model = fast, system = "You are a financial analyst." }
agent analyst_b { model = fast, system = "You are a risk analyst." }
consolidate main { agents = [analyst_a, analyst_b], judge = fast }
```
""",
    "P306": """
## What it catches
Two tools an agent would see under one name: the same tool or delegated
agent listed twice in `tools`, or names that the providers' tool-name rules
would make identical.

## Why it matters
Providers identify a tool call by its name alone. Two tools with one name
are rejected by the provider, or the model's call goes to the wrong one.

## Example
```plait
model fast = "openai/gpt-4o-mini"
tool lookup "Look up a topic." { run = python("kb:lookup") }
agent main { model = fast, tools = [lookup, lookup] }
```

## Fix
List each tool once; rename one of two tools that collide.
```plait
model fast = "openai/gpt-4o-mini"
tool lookup "Look up a topic." { run = python("kb:lookup") }
agent main { model = fast, tools = [lookup] }
```
""",
    "P307": """
## What it catches
A `scripted` model whose replies file is missing, is not JSON, or is not a
script: not a list of replies (or an object of lists keyed by agent and step
names), a reply with unknown keys, a tool call to a tool the agent does not
have, a caller with no replies.

## Why it matters
The scripted provider is what examples and tests run on. A broken script
should fail `plait check`, not the run halfway through.

## Example
```text
model demo = "scripted/demo" { script = "demo.replies.json" }   # no such file beside the spec
```

## Fix
Write the file beside the spec, e.g. `[{"text": "Hello!"}]`, or correct the
reported entry.
""",
    "P401": """
## What it catches
A `{{ path }}` template that cannot resolve where it is used:
`{{input.x}}` when the element before is a parallel without branch `x` (or
is not a parallel at all), or a tool template naming a parameter the tool
does not have.

## Why it matters
Templates are filled at run time; a bad path fails the run at that moment,
often after minutes of model calls.

## Example
```plait
model fast = "openai/gpt-4o-mini"
agent news { model = fast }
agent weather { model = fast }
step summary { model = fast, prompt = "News: {{input.news}}\\nSports: {{input.sports}}" }
chain main = parallel(news, weather) -> summary
```

## Fix
Use a branch the parallel has (or a parameter the tool declares).
```plait
model fast = "openai/gpt-4o-mini"
agent news { model = fast }
agent weather { model = fast }
step summary { model = fast, prompt = "News: {{input.news}}\\nWeather: {{input.weather}}" }
chain main = parallel(news, weather) -> summary
```
""",
    "P331": """
## What it catches
An `mcp` server that is neither started (`command = ["prog", "arg"]`) nor
reached (`url = "https://..."`), or is both; a `url` that is not http:// or
https://; `env` on a server reached by `url` or `headers` on one plait
starts, where they would do nothing.

## Why it matters
plait must know how to reach the server before any agent can use its tools;
a setting that does nothing usually means the server is not configured the
way its author thinks (a token in `env` that a remote server never sees).

## Example
```plait
model m = "openai/gpt-4o"
mcp files "The project's files." {
  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "./data"]
  url = "http://127.0.0.1:8931/mcp"
}
agent a { model = m, tools = [files] }
```

## Fix
Keep one way to reach the server.
```plait
model m = "openai/gpt-4o"
mcp files "The project's files." {
  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "./data"]
}
agent a { model = m, tools = [files] }
```
""",
    "P332": """
## What it catches
An `mcp` server with no entry in the `plait.lock` beside the file that
declares it (or no lock at all). `plait check` never starts a server, so
without the lock it cannot check the server's tool names, approvals or name
collisions. A warning: the spec may still be right.

## Why it matters
A typo in `files.read_text_fle` or two servers both offering `search` is
then found only when a run starts the server. `plait run` needs the lock
too, to notice when a server starts offering different tools.

## Example
```plait
mcp files "The project's files." {
  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "./data"]
}
```

## Fix
Lock the server: `plait mcp lock` starts each server once, writes what it
offers to `plait.lock`, and the lock is committed beside the spec.
```text
plait mcp lock spec.plait
```
""",
    "P333": """
## What it catches
A `plait.lock` entry written for another version of the declaration: the
server's `command`, `url`, the names (and literal values) in `env`, or the
header names changed since `plait mcp lock` ran. Its allow-list, `timeout`
and `approval` are not part of this: the lock records every tool the server
offers and the spec picks from those.

## Why it matters
Another command or URL may be another server, with other tools; the locked
tool list no longer says what the agents will see, so the tools are not
checked against it. A warning, like a missing lock.

## Example
```text
mcp files { command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "./docs"] }
warning[P333]: the `plait.lock` entry for mcp `files` is stale
```
(the lock was written when the command ended in `./data`).

## Fix
Lock it again and commit the new lock:
```text
plait mcp lock spec.plait
```
""",
    "P334": """
## What it catches
A `plait.lock` beside a spec that declares `mcp` servers which cannot be
read: not JSON (a merge left conflict markers in it), a version this plait
does not read, an entry without its fingerprint or tool names, a symlink
out of the spec's folder, a file over 8 MB. An error, unlike a missing lock:
a lock that exists is meant to be used, and a broken one usually is a merge
or an edit gone wrong.

## Why it matters
Nothing the servers offer can be checked, and `plait run` would refuse the
lock too.

## Example
```text
<<<<<<< HEAD
{"version": 1, "servers": {...}}
error[P334]: `plait.lock` is not JSON (line 1, column 1: Expecting value)
```

## Fix
Write it again rather than by hand:
```text
plait mcp lock spec.plait
```
""",
    "P335": """
## What it catches
A tool name that the server does not offer according to its fresh
`plait.lock` entry: in the server's `tools` allow-list or `approval`, or an
agent's `files.read_text_file` in `tools`, `until` or `approval`.

## Why it matters
The model is only shown tools the server has; an `until` on a tool that does
not exist never ends the run, an approval on one never asks anybody.

## Example
```text
mcp files { command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "./data"] }
agent a { model = m, tools = [files.read_txt_file] }
error[P335]: mcp `files` does not offer a tool `read_txt_file`
help: did you mean `read_text_file`?
```

## Fix
Use the name the server offers (`plait check` lists them), or lock again if
the server changed: `agent a { model = m, tools = [files.read_text_file] }`.
```text
plait mcp lock spec.plait
```
""",
    "P336": """
## What it catches
An MCP tool that the server's own allow-list (`tools = [...]` in the `mcp`
block) leaves out, named by the server's `approval` or by an agent as
`files.write_file` in `tools`, `until` or `approval`. Needs no lock: the
allow-list is in the spec.

## Why it matters
Tools outside the allow-list are never offered to any agent, so naming one
is a mistake either in the allow-list or in the agent.

## Example
```plait
model m = "openai/gpt-4o"
mcp files {
  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "./data"]
  tools = [read_text_file]
}
agent a { model = m, tools = [files.write_file] }
```

## Fix
Add the tool to the allow-list, or name one it keeps.
```plait
model m = "openai/gpt-4o"
mcp files {
  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "./data"]
  tools = [read_text_file, write_file]
}
agent a { model = m, tools = [files.write_file] }
```
""",
    "P501": """
## What it catches
A string that looks like a credential: an API key (`sk-...`, `sk_live_...`,
`AIza...`, an AWS key id or secret access key), a token (`ghp_...`,
`glpat-...`, `xoxb-...`, a JWT, `Bearer ...`), a PEM private key, HTTP Basic
credentials (`Basic ...` or a URL's `user:password@`), a Slack webhook, 32 or
more hex digits, or any literal `api_key`. The formats are gitleaks' and
detect-secrets' (src/plait/core/redact.py). The diagnostic shows only the first
characters, and every output format masks the value.

## Why it matters
A spec is committed, shared and printed in logs and CI annotations. A key
written into it leaks to everyone who can read any of those.

## Example
```plait
model fast = "openai/gpt-4o-mini" { api_key = "sk-proj-0123456789abcdefghijklmnopqrstuv" }
agent main { model = fast }
```

## Fix
Keep the key in the environment and read it from there, then revoke the
leaked key.
```plait
model fast = "openai/gpt-4o-mini" { api_key = env("OPENAI_API_KEY") }
agent main { model = fast }
```
""",
    "P610": """
## What it catches
A `# plait: ignore[CODE]` comment that suppresses nothing: the code is not
reported on that line (or, on a declaration's first line, anywhere in that
declaration), the word is not a plait code, the code is an error (only
warnings can be suppressed), or the brackets are missing.

## Why it matters
A suppression outlives the problem it hid; left in place it would silently
hide the next, real one. An error cannot be suppressed because a spec that
`plait check` passes must be able to run.

## Example
```text
model fast = "openai/gpt-4o-mini"  # plait: ignore[P601]   <- `fast` is used
agent main { model = fast }
```

## Fix
Remove the comment (`plait check --fix` does), or name the code that is
reported there; `plait explain CODE` says what each code means.
""",
    "P601": """
## What it catches
A declaration nothing uses: a model no agent or step calls, a tool no agent
lists, a runnable that is neither the entry point (`main`, or the only
runnable) nor part of another one. A warning: `plait check` still passes
unless `--strict`.

## Why it matters
Unused declarations are usually leftovers or a missing reference: an agent
written but never placed in the chain does not run, and nothing else says so.

## Example
```plait
model fast = "openai/gpt-4o-mini"
model strong = "anthropic/claude-sonnet-4-5"
agent main { model = fast }
```

## Fix
Use it, or remove it.
```plait
model fast = "openai/gpt-4o-mini"
model strong = "anthropic/claude-sonnet-4-5"
agent main { model = fast, fallback = [strong] }
```
""",
    "P209": r"""
## What it catches
An `output` (or an ask's `answer`) that declares no fields, or gives a field
a default. An `output` says what the model's reply must contain; a default
would let a reply leave the field out and have plait invent it.

## Why it matters
The runtime asks the provider for this JSON Schema (strict structured output,
where every field is required). An empty record gives downstream nothing to
read; a default is never sent and would silently mask a missing field.

## Example
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step main {
  model  = fast
  prompt = "Grade {{input}}"
  output { score: int = 5 }
}
```

## Fix
Remove the default; mark the field optional (`int?`) if a reply may leave it out.
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step main {
  model  = fast
  prompt = "Grade {{input}}"
  output { score: int }
}
```
""",
    "P308": r"""
## What it catches
A route whose subject is not a literal union or `bool` (a `string`, an `int`,
a record) and that has no `else`. No list of cases can cover every string.

## Why it matters
A route runs exactly one case. On a free-form value, any reply the cases do
not list would leave the run with nowhere to go; the compiler makes you say
what happens then, or narrow the type so every value is known.

## Example
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: string }
}
step a { model = fast, prompt = "A: {{input.topic}}" }
step b { model = fast, prompt = "B: {{input.topic}}" }
route pick on input.topic {
  "x" -> a
  "y" -> b
}
chain main = classify -> pick
```

## Fix
Declare the field as a literal union (or add `else -> RUNNABLE`).
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: "x" | "y" }
}
step a { model = fast, prompt = "A: {{input.topic}}" }
step b { model = fast, prompt = "B: {{input.topic}}" }
route pick on input.topic {
  "x" -> a
  "y" -> b
}
chain main = classify -> pick
```
""",
    "P309": r"""
## What it catches
A route case whose literal is not a value of the subject's type: a typo
(`"biling"`), a value the producer's `output` never lists, or a string case on
a `bool`. The message names the allowed values and the nearest one.

## Why it matters
The case can never be taken, and the value it was meant for falls to `else`
or fails the run. The second label points at the declaration of the type.

## Example
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: "x" | "y" }
}
step a { model = fast, prompt = "A: {{input.topic}}" }
step b { model = fast, prompt = "B: {{input.topic}}" }
route pick on input.topic {
  "x" -> a
  "yy" -> b
}
chain main = classify -> pick
```

## Fix
Use a value of the type (or add it to the union in the producer's `output`).
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: "x" | "y" }
}
step a { model = fast, prompt = "A: {{input.topic}}" }
step b { model = fast, prompt = "B: {{input.topic}}" }
route pick on input.topic {
  "x" -> a
  "y" -> b
}
chain main = classify -> pick
```
""",
    "P310": r"""
## What it catches
A route without `else` that leaves a value of its subject's literal union (or
`true`/`false` of a `bool`) without a case. The message lists every missing
value.

## Why it matters
The model may return any value of the union; one no case covers would end
the run with no case to take. Adding a value to an `output` union later is
caught here, at every route on it.

## Example
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: "x" | "y" | "z" }
}
step a { model = fast, prompt = "A: {{input.topic}}" }
step b { model = fast, prompt = "B: {{input.topic}}" }
route pick on input.topic {
  "x" -> a
  "y" -> b
}
chain main = classify -> pick
```

## Fix
Add a case for each missing value, or an `else`.
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: "x" | "y" | "z" }
}
step a { model = fast, prompt = "A: {{input.topic}}" }
step b { model = fast, prompt = "B: {{input.topic}}" }
route pick on input.topic {
  "x" -> a
  else -> b
}
chain main = classify -> pick
```
""",
    "P311": r"""
## What it catches
Two cases of one route for the same value (or two `else` cases).

## Why it matters
A route runs exactly one case: the second one can never run, which is
almost always a copy-paste slip where another value was meant.

## Example
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: "x" | "y" }
}
step a { model = fast, prompt = "A: {{input.topic}}" }
step b { model = fast, prompt = "B: {{input.topic}}" }
route pick on input.topic {
  "x" -> a
  "x" -> b
  "y" -> b
}
chain main = classify -> pick
```

## Fix
Remove the duplicate, or give it the value it was meant for.
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: "x" | "y" }
}
step a { model = fast, prompt = "A: {{input.topic}}" }
step b { model = fast, prompt = "B: {{input.topic}}" }
route pick on input.topic {
  "x" -> a
  "y" -> b
}
chain main = classify -> pick
```
""",
    "P312": r"""
## What it catches
A `loop` with no `max_iterations`.

## Why it matters
`until` is a condition on a model's reply; nothing guarantees it ever
holds. Every loop in plait is bounded, so a run always ends and its cost has
a ceiling. `on_exhausted` says what happens when the bound is reached.

## Example
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step draft { model = fast, prompt = "Improve: {{input}} {{loop.last.feedback}}" }
step review {
  model  = fast
  prompt = "Grade: {{input}}"
  output { verdict: "accept" | "revise", feedback: string, score: int }
}
loop main = draft -> review {
  until = verdict == "accept"
}
```

## Fix
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step draft { model = fast, prompt = "Improve: {{input}} {{loop.last.feedback}}" }
step review {
  model  = fast
  prompt = "Grade: {{input}}"
  output { verdict: "accept" | "revise", feedback: string, score: int }
}
loop main = draft -> review {
  until          = verdict == "accept"
  max_iterations = 3
}
```
""",
    "P313": r"""
## What it catches
A loop's `until` that cannot be evaluated as written: a field the body's
output does not declare, a literal outside the field's enum, an order
comparison (`<`, `>=`) on something that is not a number, a comparison of a
field with a value of another type, or a bare field that is not a `bool`.

## Why it matters
An `until` that can never hold runs the loop to its bound every time, and
one that reads a missing field fails at run time. The check uses the body's
declared `output`, so a renamed field is caught at every loop reading it.

## Example
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step draft { model = fast, prompt = "Improve: {{input}} {{loop.last.feedback}}" }
step review {
  model  = fast
  prompt = "Grade: {{input}}"
  output { verdict: "accept" | "revise", feedback: string, score: int }
}
loop main = draft -> review {
  until          = verdict == "acept"
  max_iterations = 3
}
```

## Fix
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step draft { model = fast, prompt = "Improve: {{input}} {{loop.last.feedback}}" }
step review {
  model  = fast
  prompt = "Grade: {{input}}"
  output { verdict: "accept" | "revise", feedback: string, score: int }
}
loop main = draft -> review {
  until          = verdict == "accept" or score >= 8
  max_iterations = 3
}
```
""",
    "P314": r"""
## What it catches
A `map` whose `over` path is not a `list[T]` at the place the map runs: a
string, a record, a number.

## Why it matters
A map runs its body once per item; over a value that is not a list there
are no items. The check follows the type that really reaches the map, so it
catches a producer whose `output` changed.

## Example
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step outline {
  model  = fast
  prompt = "Plan a report on {{input}}"
  output { sections: string }
}
step write { model = fast, prompt = "Write section {{map.index}}: {{input}}" }
map write_all = write { over = input.sections }
chain main = outline -> write_all
```

## Fix
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step outline {
  model  = fast
  prompt = "Plan a report on {{input}}"
  output { sections: list[string] }
}
step write { model = fast, prompt = "Write section {{map.index}}: {{input}}" }
map write_all = write { over = input.sections }
chain main = outline -> write_all
```
""",
    "P315": r"""
## What it catches
In a file that starts `plait 0.2`: a `{{state.x}}` read when the spec has no
`state` block, or when the block does not declare `x`. (0.1 files leave
state unchecked.)

## Why it matters
State is written by tools at run time; a key nobody declares is a typo or a
value no tool may write (an undeclared write is refused at run time), so the
read would always render empty.

## Example
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
state { order: string? }
step main { model = fast, prompt = "Order {{state.order_id}}: {{input}}" }
```

## Fix
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
state { order_id: string? }
step main { model = fast, prompt = "Order {{state.order_id}}: {{input}}" }
```
""",
    "P316": r"""
## What it catches
A `{{NAME}}` or `{{NAME.field}}` read at a place where NAME has not finished
on every path that reaches it: NAME runs later, in another branch of a
parallel, in one case of a route only, or not at all. The check is dominance
on the run graph, at every place the reader runs.

## Why it matters
The read would render empty (or fail) on some runs and not others, which is
the hardest kind of bug to see in a prompt.

## Example
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: string }
}
step answer { model = fast, prompt = "Answer {{run.input}} about {{classify.topic}}" }
chain main = answer -> classify
```

## Fix
Run NAME first (or pass what is needed through `{{input}}`).
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: string }
}
step answer { model = fast, prompt = "Answer {{run.input}} about {{classify.topic}}" }
chain main = classify -> answer
```
""",
    "P402": r"""
## What it catches
A template path that names a field its record type does not declare: a
field the previous runnable's `output` lacks (`{{input.sumary}}`), a field of
`{{run.input}}` the `input` block lacks, or a field of a named runnable's
output (`{{classify.topic}}`). The second label points at the declaration.

## Why it matters
The run would render an empty value (or fail) where the prompt expected
data. Checking every place a runnable is used catches a field renamed in one
producer but still read downstream.

## Example
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: string, summary: string }
}
step answer { model = fast, prompt = "Answer about {{input.sumary}}" }
chain main = classify -> answer
```

## Fix
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
step classify {
  model  = fast
  prompt = "Classify {{input}}"
  output { topic: string, summary: string }
}
step answer { model = fast, prompt = "Answer about {{input.summary}}" }
chain main = classify -> answer
```
""",
    "P317": r"""
## What it catches
A python tool or code step whose module is neither a file in the spec's
folder (`module.py`, or `package/module.py` for `package.module`) nor a
package the checking interpreter can find by name. Nothing is imported: the
folder is searched for the file, and the interpreter's path is searched
without running any code. An error in a `plait 0.2` file, a warning in 0.1.

## Why it matters
The module is imported only when the tool first runs, so a typo in its name
used to pass `check` and then fail the run at its first tool call, after
model calls had already been paid for.

## Example
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
tool clock "The time." { run = python("clock_tool:now") }
agent main { model = fast, tools = [clock] }
```

## Fix
Name a module that exists beside the spec (or an installed one).
```plait
plait 0.2
model fast = "openai/gpt-4o-mini"
tool clock "The time." { run = python("time:ctime") }
agent main { model = fast, tools = [clock] }
```
""",
    "P318": r"""
## What it catches
A python tool or code step whose module file is found beside the spec, but
does not define the function named after the `:` (or does not parse). The
file is read and parsed, never imported; a did-you-mean names the closest
function it does define.

## Why it matters
The run would fail on the first call of the tool with an error the model
sees, not the person who wrote the spec.

## Example
With `kb.py` beside the spec defining `def lookup(topic): ...`:
```text
tool lookup "Look up a topic." { run = python("kb:look_up") }
error[P318]: `kb.py` defines no function `look_up`
help: did you mean `lookup`?
```

## Fix
Name the function as `kb.py` defines it: `run = python("kb:lookup")`.
```text
tool lookup "Look up a topic." { run = python("kb:lookup") }
```
""",
    "P319": r"""
## What it catches
A python tool whose function has type hints that disagree with the tool's
`params`: a parameter the function does not take (and no `**kwargs`), a
function parameter without a default that `params` does not declare, a
parameter optional in `params` but required by the function, or a basic
type that differs (`int` in `params`, `str` in the hint).

## Why it matters
The model is shown `params` as the tool's schema and calls it that way; a
function that expects something else fails on the call, or gets a value of a
type it does not handle.

## Example
With `kb.py` defining `def lookup(topic: str, limit: str) -> str: ...`:
```text
tool lookup "Look up a topic." {
  params { topic: string, limit: int = 5 }
  run = python("kb:lookup")
}
error[P319]: `limit` is `integer` in tool `lookup`'s `params`, but `kb:lookup` hints `string`
```

## Fix
Make them agree: `def lookup(topic: str, limit: int = 5) -> str: ...`.
```text
tool lookup "Look up a topic." {
  params { topic: string, limit: int = 5 }
  run = python("kb:lookup")
}
```
""",
}

# A code added without documentation still loads (the explain tests point it out).
CODES = {code: replace(entry, explanation=_DOCS.get(code, "").strip()) for code, entry in CODES.items()}

_BY_NAME = {c.name: c for c in CODES.values()}

#: The sections every explanation has, in order.
SECTIONS = ("What it catches", "Why it matters", "Example", "Fix")
_HEADING = re.compile(r"^## (.+)$", re.M)


def sections(code: str) -> dict[str, str]:
    """An explanation split at its `## ` headings: section title -> text."""
    parts = _HEADING.split(CODES[code].explanation)
    return {title.strip(): body.strip() for title, body in zip(parts[1::2], parts[2::2])}


def lookup(word: str) -> Code | None:
    """A code by its code (`P101`, any case) or its name (`undefined-name`)."""
    word = word.strip()
    return CODES.get(word.upper()) or _BY_NAME.get(word.lower().replace("_", "-"))


def make(
    code: str,
    message: str,
    span: Span,
    *,
    labels: tuple[Label, ...] | list[Label] = (),
    notes: tuple[str, ...] | list[str] = (),
    fix: Fix | None = None,
    redact: tuple[Span, ...] = (),
) -> Diagnostic:
    """A diagnostic with the catalogue's name and severity for `code`."""
    entry = CODES[code]
    return Diagnostic(code, entry.name, entry.severity, message, span, tuple(labels), tuple(notes), fix, redact)
