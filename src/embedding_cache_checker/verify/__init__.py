"""Links between the code and the TLA+ spec: state-graph replay, trace validation, CrossHair."""
