"""Benchmark inputs: a valid spec of N lines and the same declarations as YAML.

Each group of eight declarations (model, tool with params, two agents, step,
consolidate, parallel, chain) is 64 lines, so 10,000 lines hold about 1,250
declarations, the size the front-end targets are stated for. A final
`chain main` uses every group's chain, so the spec checks without warnings.
"""

from __future__ import annotations

GROUP_LINES = 64


def group(i: int) -> str:
    """Group `i`: its eight declarations, GROUP_LINES lines, every name suffixed with `i`."""
    return f'''# --- group {i} -------------------------------------------------
model m{i} = "openai/gpt-4o-mini" {{
  temperature = 0.2
  max_tokens  = 800
  timeout     = 30s
  retries     = 3
}}

# A tool that calls the knowledge base.
tool t{i} "Look up facts about a topic in the knowledge base." {{
  params {{
    topic: string "What to look up"
    limit: int = 5
    units: "metric" | "imperial" = "metric"
  }}
  run     = http(GET, "https://kb.example.com/search?q={{{{topic}}}}&n={{{{limit}}}}")
  timeout = 10s
}}

agent a{i} "Look up factual information on a topic." {{
  model     = m{i}
  system    = "You are a research specialist. Answer factual questions concisely."
  tools     = [t{i}]
  max_steps = 16
}}

agent b{i} "Write the briefing." {{
  model  = m{i}
  system = """
    You write crisp briefings. Use the research tool for facts,
    then finish with the lookup tool.
  """
  tools  = [a{i}, t{i}]                 # an agent in `tools` is delegated to
  until  = t{i} succeeded
  retry_malformed = 2
}}

step s{i} {{
  model      = m{i}
  prompt     = "Translate to French: {{{{input}}}}"
  max_tokens = 400
}}

consolidate v{i} {{
  agents = [a{i}, b{i}]
  judge  = m{i}
  rounds = 3
}}

parallel p{i} = [s{i}, v{i}] {{
  on_error = collect
}}

# Write, then translate and debate at once, then both again.
chain c{i} = b{i} -> parallel(s{i}, v{i}) -> p{i}

# ------------------------------------------------------------------
# (end of group {i})
# Every group is the same shape so that line and declaration
# counts scale together: 64 lines, 8 declarations.
#
#
#
#
'''


def spec(lines: int) -> str:
    """A valid spec of about `lines` lines."""
    groups = max(1, lines // GROUP_LINES)
    body = "".join(group(i) for i in range(groups))
    main = " -> ".join(f"c{i}" for i in range(groups))
    return f"plait 0.1\n\n{body}chain main = {main}\n"


def yaml_data(lines: int) -> dict:
    """The same declarations as plain data, for the YAML reference."""
    groups = max(1, lines // GROUP_LINES)
    data: dict = {
        "version": 0.1,
        "models": {},
        "tools": {},
        "agents": {},
        "steps": {},
        "consolidates": {},
        "parallels": {},
        "chains": {},
    }
    for i in range(groups):
        data["models"][f"m{i}"] = {
            "target": "openai/gpt-4o-mini",
            "temperature": 0.2,
            "max_tokens": 800,
            "timeout": "30s",
            "retries": 3,
        }
        data["tools"][f"t{i}"] = {
            "description": "Look up facts about a topic in the knowledge base.",
            "params": {
                "topic": {"type": "string", "description": "What to look up"},
                "limit": {"type": "int", "default": 5},
                "units": {"type": ["metric", "imperial"], "default": "metric"},
            },
            "run": {"http": {"method": "GET", "url": "https://kb.example.com/search?q={{topic}}&n={{limit}}"}},
            "timeout": "10s",
        }
        data["agents"][f"a{i}"] = {
            "description": "Look up factual information on a topic.",
            "model": f"m{i}",
            "system": "You are a research specialist. Answer factual questions concisely.",
            "tools": [f"t{i}"],
            "max_steps": 16,
        }
        data["agents"][f"b{i}"] = {
            "description": "Write the briefing.",
            "model": f"m{i}",
            "system": "You write crisp briefings. Use the research tool for facts,\n"
            "then finish with the lookup tool.\n",
            "tools": [f"a{i}", f"t{i}"],
            "until": {"succeeded": f"t{i}"},
            "retry_malformed": 2,
        }
        data["steps"][f"s{i}"] = {"model": f"m{i}", "prompt": "Translate to French: {{input}}", "max_tokens": 400}
        data["consolidates"][f"v{i}"] = {"agents": [f"a{i}", f"b{i}"], "judge": f"m{i}", "rounds": 3}
        data["parallels"][f"p{i}"] = {"branches": [f"s{i}", f"v{i}"], "on_error": "collect"}
        data["chains"][f"c{i}"] = [f"b{i}", {"parallel": [f"s{i}", f"v{i}"]}, f"p{i}"]
    data["chains"]["main"] = [f"c{i}" for i in range(groups)]
    return data


SMALL = """plait 0.1

model fast = "openai/gpt-4o-mini" { temperature = 0.2, timeout = 30s }

tool lookup "Look up facts about a topic." {
  params {
    topic: string "What to look up"
  }
  run = http(GET, "https://kb.example.com/search?q={{topic}}")
}

agent main "Answer questions." {
  model = fast
  tools = [lookup]
}
"""


def _group_02(i: int) -> str:
    """A 0.2 group: typed outputs read downstream by field and by name, a route, a loop and a map."""
    return f"""# --- group {i} (0.2) ----------------------------------------------
model m{i} = "openai/gpt-4o-mini" {{ temperature = 0.2, timeout = 30s }}

step classify{i} "Sort a ticket." {{
  model  = m{i}
  prompt = "Ticket from {{{{run.input.customer}}}}: {{{{run.input.ticket}}}}"
  output {{
    category: "billing" | "tech" | "sales"
    urgency:  int "1 (low) to 5 (high)"
    summary:  string
  }}
}}

step billing{i} {{ model = m{i}, prompt = "Billing: {{{{input.summary}}}} ({{{{state.order_id}}}})" }}
step tech{i} {{ model = m{i}, prompt = "Tech: {{{{input.summary}}}}, urgency {{{{classify{i}.urgency}}}}" }}
step sales{i} {{ model = m{i}, prompt = "Sales: {{{{classify{i}.summary}}}}" }}

route triage{i} on input.category {{
  "billing" -> billing{i}
  "tech"    -> tech{i}
  else      -> sales{i}
}}

step draft{i} {{ model = m{i}, prompt = "Improve {{{{input}}}}; feedback: {{{{loop.last.feedback}}}}" }}
step review{i} "Grade a draft." {{
  model  = m{i}
  prompt = "Grade round {{{{loop.iteration}}}}: {{{{input}}}}"
  output {{ verdict: "accept" | "revise", feedback: string, score: int }}
}}

loop polish{i} = draft{i} -> review{i} {{
  until          = verdict == "accept" or score >= 8
  max_iterations = 3
  on_exhausted   = last
}}

step outline{i} {{
  model  = m{i}
  prompt = "Plan sections on {{{{input.feedback}}}} for {{{{classify{i}.category}}}}"
  output {{ sections: list[object {{ title: string, brief: string }}] }}
}}

step write{i} {{ model = m{i}, prompt = "Write {{{{input.title}}}} ({{{{map.index}}}}): {{{{map.item.brief}}}}" }}

map write_all{i} = write{i} {{ over = input.sections, concurrency = 4 }}

chain c{i} = classify{i} -> triage{i} -> polish{i} -> outline{i} -> write_all{i}

# ------------------------------------------------------------------
# (end of group {i})
# Every group is the same shape, and as long as a 0.1 group
# (64 lines), so the two specs compare line for line.
#
#
#
#
#
#
#
#
#
#
#
#
"""


_HEAD_02 = """plait 0.2

input {
  ticket:   string "The customer's message"
  customer: string
}

state { order_id: string? }

"""


def spec_02(lines: int) -> str:
    """A valid 0.2 spec of about `lines` lines: the same line count as `spec(lines)`, typed data flow in every group."""
    groups = max(1, lines // GROUP_LINES)
    body = "".join(_group_02(i) for i in range(groups))
    main = " -> ".join(f"c{i}" for i in range(groups))
    return f"{_HEAD_02}{body}chain main = {main}\n"


def _group_03(i: int) -> str:
    """A 0.3 group: the 0.2 group's flow written with what 0.3 adds (a named type, `with`, expressions in
    templates, a route subject and a map filter, a thread, a route case that leaves its loop by `break`)."""
    return f"""# --- group {i} (0.3) ----------------------------------------------
model m{i} = "openai/gpt-4o-mini" {{ temperature = 0.2, timeout = 30s }}

type Ticket{i} {{
  category: "billing" | "tech" | "sales"
  urgency:  int "1 (low) to 5 (high)"
  summary:  string
}}

thread chat{i} {{ keep_last = 20 }}

step classify{i} "Sort a ticket." {{
  model  = m{i}
  prompt = "Ticket from {{{{ run.input.customer | upper }}}}: {{{{run.input.ticket}}}}"
  output Ticket{i}
}}

step billing{i} {{ model = m{i}, prompt = "Billing: {{{{input.summary}}}} ({{{{ state.order_id | default('none') }}}})" }}
step tech{i} {{ model = m{i}, prompt = "Tech: {{{{input.summary}}}}, urgency {{{{ classify{i}.urgency * 2 }}}}" }}
step sales{i} {{ model = m{i}, prompt = "Sales: {{{{classify{i}.summary}}}}" }}

route triage{i} on "{{{{ input.category }}}}" {{
  "billing" -> billing{i}
  "tech"    -> tech{i}
  else      -> sales{i}
}}

step draft{i} {{
  model  = m{i}
  thread = chat{i}
  prompt = "Improve {{{{input}}}}; {{{{ loop.last | default('first draft') }}}}"
}}
step review{i} "Grade a draft." {{
  model  = m{i}
  prompt = "Grade round {{{{loop.iteration}}}} of {{{{ len(loop.history) + 1 }}}}: {{{{input}}}}"
  output {{ verdict: "accept" | "revise", feedback: string, score: int }}
}}
step note{i} {{ model = m{i}, prompt = "Note what to change: {{{{input.feedback}}}}" }}
route gate{i} on input.verdict {{
  "accept" -> break
  "revise" -> note{i}
}}

loop polish{i} = draft{i} -> review{i} -> gate{i} {{ max_iterations = 3, on_exhausted = last }}

step outline{i} {{
  model  = m{i}
  with   {{ topic: classify{i}.summary, kind: classify{i}.category }}
  prompt = "Plan sections on {{{{input.topic}}}} for {{{{ input.kind | upper }}}}"
  output {{ sections: list[object {{ title: string, brief: string }}] }}
}}

step write{i} {{
  model  = m{i}
  with   {{ title: map.item.title, brief: map.item.brief, n: map.index }}
  prompt = "Write {{{{input.title}}}} ({{{{ input.n + 1 }}}}): {{{{input.brief}}}}"
}}

map write_all{i} = write{i} {{ over = input.sections, concurrency = 4, filter = brief != "" }}

chain c{i} = classify{i} -> triage{i} -> polish{i} -> outline{i} -> write_all{i}

# ------------------------------------------------------------------
# (end of group {i}: as long as a 0.1 or 0.2 group, 64 lines)
"""


_HEAD_03 = _HEAD_02.replace("plait 0.2", "plait 0.3")


def spec_03(lines: int) -> str:
    """A valid 0.3 spec of about `lines` lines: the 0.2 spec's groups, line for line, written with 0.3's constructs."""
    groups = max(1, lines // GROUP_LINES)
    body = "".join(_group_03(i) for i in range(groups))
    main = " -> ".join(f"c{i}" for i in range(groups))
    return f"{_HEAD_03}{body}chain main = {main}\n"


def _group_03_in_02(i: int) -> str:
    """The 0.3 group's workflow as 0.2 can write it, line for line: the record inline (no named type), plain paths
    (no expressions), no thread, and no `break`: the loop ends on its `until` (read from the review inside the
    body) and the route's accepting case runs a step; no map filter."""
    return f"""# --- group {i} (the 0.3 group in 0.2) ------------------------------
model m{i} = "openai/gpt-4o-mini" {{ temperature = 0.2, timeout = 30s }}

step classify{i} "Sort a ticket." {{
  model  = m{i}
  prompt = "Ticket from {{{{run.input.customer}}}}: {{{{run.input.ticket}}}}"
  output {{
    category: "billing" | "tech" | "sales"
    urgency:  int "1 (low) to 5 (high)"
    summary:  string
  }}
}}

step billing{i} {{ model = m{i}, prompt = "Billing: {{{{input.summary}}}} ({{{{state.order_id}}}})" }}
step tech{i} {{ model = m{i}, prompt = "Tech: {{{{input.summary}}}}, urgency {{{{classify{i}.urgency}}}}" }}
step sales{i} {{ model = m{i}, prompt = "Sales: {{{{classify{i}.summary}}}}" }}

route triage{i} on input.category {{
  "billing" -> billing{i}
  "tech"    -> tech{i}
  else      -> sales{i}
}}

step draft{i} {{
  model  = m{i}
  prompt = "Improve {{{{input}}}}; {{{{loop.last}}}}"
}}
step review{i} "Grade a draft." {{
  model  = m{i}
  prompt = "Grade round {{{{loop.iteration}}}} of {{{{loop.iteration}}}}: {{{{input}}}}"
  output {{ verdict: "accept" | "revise", feedback: string, score: int }}
}}
step note{i} {{ model = m{i}, prompt = "Note what to change: {{{{input.feedback}}}}" }}
step done{i} {{ model = m{i}, prompt = "Say it is accepted: {{{{input.feedback}}}}" }}
route gate{i} on input.verdict {{
  "accept" -> done{i}
  "revise" -> note{i}
}}
loop polish{i} = draft{i} -> review{i} -> gate{i} {{ until = review{i}.verdict == "accept", max_iterations = 3 }}

step outline{i} {{
  model  = m{i}
  prompt = "Plan sections on {{{{classify{i}.summary}}}} for {{{{classify{i}.category}}}}"
  output {{ sections: list[object {{ title: string, brief: string }}] }}
}}

step write{i} {{
  model  = m{i}
  prompt = "Write {{{{map.item.title}}}} ({{{{map.index}}}}): {{{{map.item.brief}}}}"
}}

map write_all{i} = write{i} {{ over = input.sections, concurrency = 4 }}

chain c{i} = classify{i} -> triage{i} -> polish{i} -> outline{i} -> write_all{i}

# ------------------------------------------------------------------
# (end of group {i}: as long as a 0.1 or 0.2 group, 64 lines)
#
#
#
#
#
#
#
"""


def spec_03_in_02(lines: int) -> str:
    """`spec_03(lines)`'s workflow written in 0.2, group for group and line for line: what the 0.3 spec is
    compared with."""
    groups = max(1, lines // GROUP_LINES)
    body = "".join(_group_03_in_02(i) for i in range(groups))
    main = " -> ".join(f"c{i}" for i in range(groups))
    return f"{_HEAD_02}{body}chain main = {main}\n"
