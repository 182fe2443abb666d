"""The contract layer: one vocabulary → every stage (spans, diagnostics, codes, and the words
(kinds, defaults, names) that dsl, compiler and runtime must agree on).

Nothing here imports `plait.dsl`, `plait.compiler` or `plait.runtime`.
"""
