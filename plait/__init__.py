"""plait: a declarative language for LLM agents."""
__version__ = "0.1.0"


def format(text: str, path: str = "<string>") -> str:
    """`text` in the canonical layout of `plait fmt`.

    Raises `plait.dsl.formatter.FormatError` (a ValueError carrying the
    diagnostics) when the text does not parse: broken specs are never rewritten.
    """
    from plait.dsl.formatter import FormatError, format_text

    formatted, diagnostics = format_text(text, path)
    if formatted is None:
        raise FormatError(diagnostics)
    return formatted
