"""The compiled graph and an input → an executed run (`Engine`, `Run`, `Agent`); nothing is imported up front.

Start at `engine.py`; every agent turn is `pipeline.TURN_STEPS`.
"""
