"""`plait serve`: served specs → an HTTP service (runs, events, decisions), the studio and the protocols.

Imported only by `plait serve` (and `plait mcp serve`); never by check, render or the other commands.
"""
