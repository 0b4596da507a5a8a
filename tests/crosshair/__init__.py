"""CrossHair over the transitions' contracts: clean run and planted bugs."""
