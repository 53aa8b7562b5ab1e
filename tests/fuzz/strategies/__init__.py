"""Hypothesis strategies for the fuzz suite: valid bodies of every door, structure-aware
mutations of them, the values that broke Sounding before (issue 9), and whole random
bodies and headers. One module per concept, every name importable from here:

- raw.py: `Raw` JSON tokens json.dumps cannot write, `dumps`, the depth limits;
- odd.py: odd values and the `weighted`/`uniform` choices they are drawn with;
- mutation.py: `mutations` of a valid body, `Mutated`;
- bodies.py: valid bodies of the JSON doors;
- transport.py: headers, encodings and random bodies.
"""

from tests.fuzz.strategies.bodies import (
    json_span,
    json_traces,
    marker,
    valid_deploy,
    valid_error,
    valid_request,
)
from tests.fuzz.strategies.mutation import Mutated, Path, mutations, paths
from tests.fuzz.strategies.odd import (
    EDGE_FLOATS,
    EDGE_INTS,
    EDGE_STRINGS,
    EDGE_TIMES,
    RAW_NUMBERS,
    RAW_STRINGS,
    _nest,
    long_strings,
    nested_values,
    odd_scalars,
    odd_strings,
    odd_text,
    odd_values,
    same_kind,
    uniform,
    weighted,
)
from tests.fuzz.strategies.raw import (
    BODY_MAX_DEPTH,
    RAW_TOKENS,
    VALUE_MAX_DEPTH,
    Raw,
    depth_of,
    dumps,
    nested_raw,
    refusable,
)
from tests.fuzz.strategies.transport import (
    CONTENT_TYPES,
    ENCODINGS,
    encode,
    random_bodies,
    transports,
)

__all__ = [
    "BODY_MAX_DEPTH", "CONTENT_TYPES", "EDGE_FLOATS", "EDGE_INTS", "EDGE_STRINGS",
    "EDGE_TIMES", "ENCODINGS", "Mutated", "Path", "RAW_NUMBERS", "RAW_STRINGS", "RAW_TOKENS",
    "Raw", "VALUE_MAX_DEPTH", "_nest", "depth_of", "dumps", "encode", "json_span",
    "json_traces", "long_strings", "marker", "mutations", "nested_raw", "nested_values",
    "odd_scalars", "odd_strings", "odd_text", "odd_values", "paths", "random_bodies",
    "refusable", "same_kind", "transports", "uniform", "valid_deploy", "valid_error",
    "valid_request", "weighted",
]
