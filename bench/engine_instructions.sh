#!/bin/bash
# Instructions a step of the bare engine's random play (valgrind's callgrind count: unlike
# CPU time, the same on a loaded machine), for comparing two checkouts of the code:
#   bench/engine_instructions.sh [TREE] [RULE_SET] [SEATS] [GAMES]
# e.g. bench/engine_instructions.sh . contract 4 3   (and the same on another tree).
# The count of GAMES games of bench.bench_engine's random play minus the count of none
# (imports, set-up and a warm-up game, which fills the solver's lazily built tables in
# both counts), divided by the steps; hash seed fixed.
set -euo pipefail
tree=$(cd "${1:-.}" && pwd); name=${2:-whiskertrail}; seats=${3:-2}; games=${4:-1}
python=${PYTHON:-$tree/.venv/bin/python}
script="
import random
from bench.bench_engine import _seed, play
from engine.rulesets import ruleset
rules = ruleset('$name')
play(rules, $seats, _seed('warm-up', $seats, 0), random.Random('warm-up'))
steps = 0
for game in range(GAMES):
    rng = random.Random(f'bench-rng/$name/$seats/{game}')
    steps += play(rules, $seats, _seed('$name', $seats, game), rng)
print(steps)"
count() {
  (cd "$tree" && PYTHONHASHSEED=0 PYTHONPATH="$tree" valgrind --tool=callgrind \
    --callgrind-out-file=/dev/null "$python" -c "${script//GAMES/$1}" 2>&1 \
    | awk '/Collected/ {print $4}')
}
steps=$(cd "$tree" && PYTHONPATH="$tree" "$python" -c "${script//GAMES/$games}")
none=$(count 0)
some=$(count "$games")
echo "$tree $name/$seats: $steps steps, $(( (some - none) / steps )) instructions a step"
