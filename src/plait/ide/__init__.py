"""Editor support: spec text + a position → diagnostics, symbols, completion, references; and the language server.

Pure functions over the compiler's data (analysis, index, refs, complete, workspace) and, in server.py, the
pygls language server `plait lsp` starts; only that module imports pygls.
"""
