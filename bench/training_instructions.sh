#!/bin/bash
# Instructions a step of the training environment (valgrind's callgrind count: unlike
# CPU time, the same on a loaded machine), for comparing two checkouts of the code:
#   bench/training_instructions.sh [TREE] [RULE_SET] [SEATS] [GAMES]
# e.g. bench/training_instructions.sh . contract 4 3   (and the same on another tree).
# The count of GAMES random games (bench.bench_training's env loop, observe on) minus
# the count of none (imports and set-up), divided by the steps; hash seed fixed.
set -euo pipefail
tree=$(cd "${1:-.}" && pwd); name=${2:-whiskertrail}; seats=${3:-2}; games=${4:-1}
python=${PYTHON:-$tree/.venv/bin/python}
count() {
  (cd "$tree" && PYTHONHASHSEED=0 PYTHONPATH="$tree" valgrind --tool=callgrind \
    --callgrind-out-file=/dev/null "$python" -c "
from bench.bench_training import env_steps
env_steps('$name', $seats, $1, True)" 2>&1 | awk '/Collected/ {print $4}')
}
steps=$(cd "$tree" && PYTHONPATH="$tree" "$python" -c "
from bench.bench_training import env_steps
print(env_steps('$name', $seats, $games, True)[0])")
none=$(count 0)
some=$(count "$games")
echo "$tree $name/$seats: $steps steps, $(( (some - none) / steps )) instructions a step"
