"""A run's model calls → cassettes: the replies recorded under their requests' keys, and served back offline.

`request.py` keys a request, `file.py` is the format, `record.py` records at
the provider boundary, `replay.py` serves a cassette as a provider, and
`export.py` makes a cassette from a run's journal rows.
"""

from .attach import record, replay
from .file import CASSETTE_FORMAT, CASSETTE_VERSION, Cassette, CassetteError, Interaction
from .record import Recorder, RecordingProvider
from .replay import ReplayProvider
from .request import canonical, canonical_bytes, request_key
from .tools import RecordingTools, ReplayTools, tool_key

__all__ = [
    "CASSETTE_FORMAT",
    "CASSETTE_VERSION",
    "Cassette",
    "CassetteError",
    "Interaction",
    "Recorder",
    "RecordingProvider",
    "RecordingTools",
    "ReplayProvider",
    "ReplayTools",
    "canonical",
    "canonical_bytes",
    "record",
    "replay",
    "request_key",
    "tool_key",
]
