"""Node and edge kinds → how they look: one shape and colour per node kind, one line style per edge kind.

Shared by the DOT and Mermaid builders so both pictures use one vocabulary.
Colours are a colour-blind-safe family (Okabe–Ito tints) so kinds stay
distinguishable in print and for most readers.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EDGE_STYLES", "GATE", "NODE_STYLES", "EdgeStyle", "NodeStyle"]


@dataclass(frozen=True, slots=True)
class NodeStyle:
    dot_shape: str
    mermaid_open: str
    mermaid_close: str
    fill: str
    stroke: str
    #: Extra DOT style words ("rounded", "dashed") beside "filled".
    dot_style: str = "filled"


@dataclass(frozen=True, slots=True)
class EdgeStyle:
    color: str
    #: DOT `style`: solid, dashed, dotted, bold.
    dot_style: str
    #: Mermaid arrow: --> solid, -.-> dotted, ==> thick.
    mermaid_arrow: str
    penwidth: float = 1.0
    arrowhead: str = "normal"
    #: Mermaid linkStyle dash pattern, or "" for a solid line.
    dasharray: str = ""


NODE_STYLES: dict[str, NodeStyle] = {
    "model": NodeStyle("cylinder", "[(", ")]", "#d6eaf8", "#1f618d"),
    "tool": NodeStyle("component", "[[", "]]", "#fdebd0", "#b9770e"),
    "agent": NodeStyle("box", "(", ")", "#d5f5e3", "#1e8449", "filled,rounded"),
    "step": NodeStyle("box", "[", "]", "#ebdef0", "#76448a"),
    "chain": NodeStyle("cds", ">", "]", "#eaeded", "#424949"),
    "parallel": NodeStyle("invtrapezium", "[/", "\\]", "#d0ece7", "#117864"),
    "join": NodeStyle("trapezium", "[\\", "/]", "#d0ece7", "#117864"),
    "consolidate": NodeStyle("hexagon", "{{", "}}", "#fadbd8", "#943126"),
    # 0.2 control flow: a route is a decision, a loop its head (the back edge returns to it),
    # a map a stack of runs, an ask a person's answer.
    "route": NodeStyle("diamond", "{", "}", "#fcf3cf", "#9a7d0a"),
    "loop": NodeStyle("box", "[\\", "\\]", "#fdedec", "#c0392b", "filled,rounded,bold"),
    "map": NodeStyle("box3d", "[/", "/]", "#d4efdf", "#117a65"),
    "ask": NodeStyle("house", "([", "])", "#fef5e7", "#af601a"),
    "mcp": NodeStyle("component", "[[", "]]", "#f6ddcc", "#a04000", "filled,dashed"),
    # A conversation runnables share (0.3): a note its users write into.
    "thread": NodeStyle("note", "[/", "\\]", "#e8daef", "#6c3483"),
    "entry": NodeStyle("circle", "((", "))", "#ffffff", "#17202a"),
    "exit": NodeStyle("doublecircle", "(((", ")))", "#ffffff", "#17202a"),
    # The expanded turn of an agent (--expand): pipeline steps and where a turn ends.
    "turn_step": NodeStyle("box", "[", "]", "#fef9e7", "#7d6608", "filled,rounded"),
    "turn_exit": NodeStyle("ellipse", "([", "])", "#f2f3f4", "#17202a"),
}

#: A tool that needs a human's approval: drawn in red with a double border.
GATE = NodeStyle("component", "[[", "]]", "#fadbd8", "#c0392b")

EDGE_STYLES: dict[str, EdgeStyle] = {
    "next": EdgeStyle("#17202a", "solid", "==>", 2.0),
    "branch": EdgeStyle("#117864", "solid", "-->", 1.5),
    "join": EdgeStyle("#117864", "solid", "-->", 1.5),
    "uses": EdgeStyle("#b9770e", "dashed", "-.->", 1.0, "vee", "5 5"),
    "delegates": EdgeStyle("#1e8449", "bold", "==>", 1.5, "vee"),
    "calls": EdgeStyle("#1f618d", "dotted", "-.->", 1.0, "vee", "2 4"),
    "fallback": EdgeStyle("#ca6f1e", "dashed", "-.->", 1.0, "vee", "8 4"),
    "judge": EdgeStyle("#943126", "bold", "==>", 1.5, "diamond"),
    "participant": EdgeStyle("#943126", "solid", "-->", 1.0),
    "until": EdgeStyle("#c0392b", "bold", "==>", 2.0, "tee"),
    "case": EdgeStyle("#9a7d0a", "solid", "-->", 1.5),
    "body": EdgeStyle("#c0392b", "solid", "-->", 1.5),
    "back": EdgeStyle("#c0392b", "dashed", "-.->", 2.0, "normal", "6 4"),
    "each": EdgeStyle("#117a65", "bold", "==>", 1.5),
    "reads": EdgeStyle("#839192", "dotted", "-.->", 1.0, "odot", "1 4"),
    "handoff": EdgeStyle("#9a7d0a", "bold", "==>", 1.5, "vee"),
    "thread": EdgeStyle("#6c3483", "dashed", "-.->", 1.0, "odiamond", "4 3"),
    "break": EdgeStyle("#c0392b", "bold", "==>", 2.0, "tee"),
    # The expanded turn.
    "turn": EdgeStyle("#7d6608", "solid", "-->", 1.5),
    "loop": EdgeStyle("#7d6608", "dashed", "-.->", 1.5, "normal", "5 5"),
    "stop": EdgeStyle("#566573", "solid", "-->", 1.0, "vee"),
    # Not drawn: only steers the layout (`end` after a chain's last element).
    "layout": EdgeStyle("#ffffff", "invis", "~~~"),
}
