#!/usr/bin/env bash
# Mutation testing of the core modules (docs/COMMANDS.md, "Mutation testing").
#
#   mutation/run.sh                 # mutate, run every mutant, print the survivors
#   mutation/run.sh 'embedding_cache.policies.s3fifo*'   # only these mutants
#
# Everything is configured in pyproject.toml [tool.mutmut]; mutmut works in
# ./mutants (a copy of the project, git-ignored) and keeps its results there,
# so a second run re-tests only what changed. Survivors and why each is
# acceptable: mutation/SURVIVORS.md. MAX_CHILDREN (default 2) sets the workers.
# Takes about an hour on 2 cores: not a CI job. Ends with mutation/score.py:
# the score, and whether SURVIVORS.md explains every survivor (exit 1 if not).
set -euo pipefail
cd "$(dirname "$0")/.."

# The checked build: the contracts run, so the policies' verification half
# (plan_victims, joined_ok, check, ...) is exercised and its mutants can die.
export EMBEDDING_CACHE_CHECKED=1
# Deterministic Hypothesis (conftest.py): the same examples for every mutant.
export HYPOTHESIS_PROFILE=ci

cli=(python mutation/mutmut_cli.py)
"${cli[@]}" run --max-children "${MAX_CHILDREN:-2}" "$@"
"${cli[@]}" results
python mutation/score.py
