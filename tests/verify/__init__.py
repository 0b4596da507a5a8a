"""Conformance links between code and spec: TLA+ values, state-graph replay, traces."""
