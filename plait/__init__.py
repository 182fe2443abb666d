"""plait: a declarative language for LLM agents."""
__version__ = "0.1.0"
