#!/usr/bin/env bash
# Public projects' own test suites, once plainly and once under `pytest --fake-accelerator`
# (issue 29, acceptance 3; the table in docs/runtime.md). Fetched code is never part of this
# repository: clone the projects into EXT yourself (commits in docs/runtime.md) and install
# them with `pip install --no-deps -e EXT/NAME` plus what each needs (listed below), into a
# virtual environment that has torch and torchdevlint.
#
#   bash benchmarks/runtime_suites.sh EXT OUT [NAME...]
#
# writes OUT/NAME_cpu.txt and OUT/NAME_fake.txt and prints each run's last line.
# Every failure in a *_fake.txt that is not in the matching *_cpu.txt is one to investigate.
set -u
EXT=${1:?usage: runtime_suites.sh EXT OUT [NAME...]}
OUT=${2:?usage: runtime_suites.sh EXT OUT [NAME...]}
shift 2
mkdir -p "$OUT"
PY=${PYTHON:-python}

# name | checkout under EXT | pytest arguments | what it needs besides torch
SUITES=(
  "ema|pytorch_ema|tests|"
  "vq|vector-quantize-pytorch|tests|einops einx frozendict"
  "optimizer|pytorch-optimizer|tests/test_optimizer.py tests/test_basic.py|pytorch-ranger"
  "diffeq|torchdiffeq|tests/api_tests.py tests/event_tests.py tests/norm_tests.py tests/gradient_tests.py|scipy"
  "xtransformers|x-transformers|tests/test_x_transformers.py|einops einx loguru packaging torch-einops-utils"
  "geoopt|geoopt|tests -W ignore::DeprecationWarning|numpy scipy"
  "torchsde|torchsde|tests/test_brownian_path.py tests/test_brownian_tree.py|numpy scipy trampoline"
)

run() {
  local name=$1 dir=$2 label=$3; shift 3
  (cd "$EXT/$dir" && OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} timeout "${SUITE_TIMEOUT:-1800}" "$PY" -m pytest -q -p no:cacheprovider -rf \
     "$@" > "$OUT/${name}_${label}.txt" 2>&1)
  printf '%-14s %-5s %s\n' "$name" "$label" "$(tail -n 1 "$OUT/${name}_${label}.txt")"
}

for entry in "${SUITES[@]}"; do
  IFS='|' read -r name dir args _needs <<< "$entry"
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
    continue
  fi
  if [ ! -d "$EXT/$dir" ]; then
    echo "$name: $EXT/$dir is missing (clone it first)"
    continue
  fi
  # shellcheck disable=SC2086
  run "$name" "$dir" cpu $args
  # shellcheck disable=SC2086
  run "$name" "$dir" fake $args --fake-accelerator
done
