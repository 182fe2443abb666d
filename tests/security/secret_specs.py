"""Secret shapes × spec positions → spec texts that hold a secret, and the bytes that must never be printed.

The secrets are assembled from pieces so this file holds no scannable literal
key (push protection and secret scanners would flag one); each is fake.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from plait.compiler.context import CompileContext
from plait.compiler.passes.build_graph import build_graph
from plait.compiler.pipeline import PASSES
from plait.dsl.loader import load_text


@dataclass(frozen=True)
class Shape:
    name: str
    #: What is written in the spec string (already escaped for a "..." literal).
    written: str
    #: The part that is the secret: no run of WINDOW characters of it may reach any output.
    secret: str


def _shapes() -> tuple[Shape, ...]:
    b64 = "Ym9i" + "OmNvcnJlY3RIb3JzZTk="  # bob:correctHorse9
    pem_body = "MIIEow" + "IBAAKCAQEAxK9fW3pQz7LmN2vR8sT4uY6wZ0aB1cD3eF5gH7iJ9kL"
    aws_secret = "wJalrXUtnF" + "EMI/K7MDENG/bPxRfiCYzQ8pLmW3x9"
    slack = "T0AB12CD3" + "/B0EF45GH6/Zq8x7WvT6sR5pQ4oN3mL2kJ1"
    return (
        Shape("openai", "sk-" + "proj-Zx81kQ2mWv7RtY5uPa3LdN9bC4eF6gH0jK", "Zx81kQ2mWv7RtY5uPa3LdN9bC4eF6gH0jK"),
        Shape("anthropic", "sk-" + "ant-api03-Qw3rTy7UiOp9AsDf2GhJkL5ZxCv", "Qw3rTy7UiOp9AsDf2GhJkL5ZxCv"),
        Shape("stripe", "sk_" + "live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
        Shape("gitlab", "glpat" + "-x7Rk2Lm9Qw4Zt8Vb3Np6", "x7Rk2Lm9Qw4Zt8Vb3Np6"),
        Shape("github", "ghp_" + "Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi", "Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi"),
        Shape("aws-key-id", "AKIA" + "QX7RZ3M5K2L9W4NB", "QX7RZ3M5K2L9W4NB"),
        Shape("aws-secret", "aws secret " + aws_secret, aws_secret),
        Shape("pem", "-----BEGIN RSA PRIVATE KEY-----\\n" + pem_body + "\\n-----END RSA PRIVATE KEY-----", pem_body),
        Shape("basic", "Basic " + b64, b64),
        Shape("url-password", "https://bob:" + "Tr0ub4dor-and-3@db.example.com/v1", "Tr0ub4dor-and-3"),
        Shape("slack-webhook", "https://hooks.slack.com/services/" + slack, slack),
        Shape(
            "hex",
            "9f86d081884c7d65" + "9a2feaa0c55ad015a3bf4f1b2b0b822c",
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822c",
        ),
        Shape(
            "jwt",
            "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ),
        # Formats gitleaks' default rules cover that the catalogue once missed (issue 25): each one fake.
        Shape(
            "sendgrid",
            "SG." + "q7Vw2Lz9Kx4Pb8Nm3Rt6Ya.5Hc1Jd0Fg7SkQl4Mx9Zv2Wb8Tn3Ry6Up1Ei5Oa0Gh4J",
            "5Hc1Jd0Fg7SkQl4Mx9Zv2Wb8Tn3Ry6Up1Ei5Oa0Gh4J",
        ),
        Shape("npm", "npm_" + "q7vw2lz9kx4pb8nm3rt6ya5hc1jd0fg7skql", "q7vw2lz9kx4pb8nm3rt6ya5hc1jd0fg7skql"),
        Shape("twilio", "SK" + "3f9a7c1e5b2d8f4a6c0e9b7d1f3a5c8e", "3f9a7c1e5b2d8f4a6c0e9b7d1f3a5c8e"),
        Shape(
            "telegram",
            "telegram token: 123456789:" + "Aq7Vw2Lz9Kx4Pb8Nm3Rt6Ya5Hc1Jd0Fg7Sk",
            "q7Vw2Lz9Kx4Pb8Nm3Rt6Ya5Hc1Jd0Fg7Sk",
        ),
        Shape(
            "pypi",
            "pypi-AgEIcHlwaS5vcmc" + "q7Vw2Lz9Kx4Pb8Nm3Rt6Ya5Hc1Jd0Fg7SkQl4Mx9Zv2Wb8Tn3Ry6Up1",
            "q7Vw2Lz9Kx4Pb8Nm3Rt6Ya5Hc1Jd0Fg7SkQl4Mx9Zv2Wb8Tn3Ry6Up1",
        ),
        Shape(
            "digitalocean", "dop_v1_" + "3f9a7c1e5b2d8f4a6c0e9b7d1f3a5c8e" * 2, "3f9a7c1e5b2d8f4a6c0e9b7d1f3a5c8e" * 2
        ),
        Shape("shopify", "shpat_" + "9b7d1f3a5c8e3f9a7c1e5b2d8f4a6c0e", "9b7d1f3a5c8e3f9a7c1e5b2d8f4a6c0e"),
        Shape("databricks", "dapi" + "5b2d8f4a6c0e9b7d1f3a5c8e3f9a7c1e", "5b2d8f4a6c0e9b7d1f3a5c8e3f9a7c1e"),
        Shape(
            "linear",
            "lin_api_" + "q7Vw2Lz9Kx4Pb8Nm3Rt6Ya5Hc1Jd0Fg7SkQl4Mx9",
            "q7Vw2Lz9Kx4Pb8Nm3Rt6Ya5Hc1Jd0Fg7SkQl4Mx9",
        ),
        Shape(
            "age",
            "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54K234",
            "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54K234",
        ),
    )


SHAPES = _shapes()

#: No run of this many characters of a secret may appear (masks keep at most a 4-character prefix).
WINDOW = 10


def _spec(
    model: str = "",
    model_attrs: str = "",
    tool_url: str = "https://api.example.com/search?q={{q}}",
    http_block: str = "",
    agent_attrs: str = "",
    description: str = "Answer questions.",
    system: str = "You help.",
    mcp: str = "",
) -> str:
    # An MCP server is used by the agent as one more tool; without one the spec is as before.
    tools = "search, remote" if mcp else "search"
    return f'''plait 0.1
{mcp}

model m = "openai-compatible/local-model" {{
  base_url = "{model or "https://llm.example.com/v1"}"
{model_attrs}}}

tool search "Search the web." {{
  params {{ q: string "The query" }}
  run = http(POST, "{tool_url}") {{
{http_block}  }}
}}

agent main "{description}" {{
  model  = m
  tools  = [{tools}]
  system = "{system}"
{agent_attrs}}}
'''


#: position name → secret string written there → spec text.
POSITIONS = {
    "model-header": lambda s: _spec(model_attrs=f'  headers = {{ "X-Team" = "{s}" }}\n'),
    "base-url": lambda s: _spec(model=f"https://llm.example.com/{s}" if "://" not in s else s),
    "tool-url": lambda s: _spec(tool_url=(s if "://" in s else f"https://api.example.com/{s}") + "?q={{q}}"),
    "http-header": lambda s: _spec(http_block=f'    headers = {{ "Authorization" = "{s}" }}\n'),
    "body": lambda s: _spec(http_block=f'    body = "{{\\"q\\": \\"{{{{q}}}}\\", \\"k\\": \\"{s}\\"}}"\n'),
    "env-default": lambda s: _spec(model_attrs=f'  api_key = env("LOCAL_KEY", "{s}")\n'),
    "attribute": lambda s: _spec(agent_attrs=f'  attributes = {{ team = "{s}" }}\n'),
    "description": lambda s: _spec(description=f"Answer questions with {s} today."),
    "prompt": lambda s: _spec(system=f"You help. Use {s} when asked."),
    "mcp-header": lambda s: _spec(
        mcp=f'mcp remote {{ url = "https://mcp.example.com/mcp", headers = {{ Authorization = "{s}" }} }}\n'
    ),
    "mcp-env": lambda s: _spec(mcp=f'mcp remote {{ command = ["npx", "server"], env = {{ SERVICE_KEY = "{s}" }} }}\n'),
    "mcp-command": lambda s: _spec(mcp=f'mcp remote {{ command = ["npx", "server", "--key", "{s}"] }}\n'),
    "script-path": lambda s: _spec().replace(
        'model m = "openai-compatible/local-model" {\n  base_url = "https://llm.example.com/v1"\n',
        f'model m = "scripted/demo" {{\n  script = "replies/{s}.json"\n',
    ),
}


def compile_anyway(text: str, folder: Path):
    """The graph a spec builds even though P501 rejects it: as if the check had missed the secret."""
    path = folder / "spec.plait"
    path.write_text(text, encoding="utf-8")
    loaded = load_text(text, str(path), folder)
    ctx = CompileContext(load=loaded, diagnostics=list(loaded.diagnostics))
    for run in PASSES:
        run(ctx)
        if run is build_graph:
            break
    return ctx.graph, loaded.sources


def leaks(output: str | bytes, secret: str) -> str | None:
    """The first WINDOW-long run of `secret` found in `output`, or None."""
    text = output.decode("utf-8", "replace") if isinstance(output, bytes) else output
    for i in range(0, max(1, len(secret) - WINDOW + 1)):
        piece = secret[i : i + WINDOW]
        if piece in text:
            return piece
    return None
