#!/usr/bin/env bash
# The runtime suite on a machine with a real GPU, and the same machine playing one without
# (the GPU hidden): the proofs' outcomes recorded both ways (device_outcomes.py), torch's
# OpInfo samples recorded both ways (benchmarks/runtime_opinfo.py --record), and the whole
# runtime suite run both ways. torchdevlint must be installed (its pytest plugin is an entry
# point); this checkout's sources come first on PYTHONPATH. Writes what it finds under $1.
set -u
out=${1:-gpu-run}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
shards=${OPINFO_SHARDS:-4}
nvidia-smi -L
python3 -c "import torch, libcst; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"
work=$(mktemp -d)
for i in $(seq 0 $((shards - 1))); do
    timeout "${OPINFO_SECONDS:-280}" python3 benchmarks/runtime_opinfo.py --samples 2 --shard "$i/$shards" \
        --record "$work/real$i.jsonl" --accelerator real >"$work/real$i.log" 2>&1 &
    CUDA_VISIBLE_DEVICES= timeout "${OPINFO_SECONDS:-280}" python3 benchmarks/runtime_opinfo.py --samples 2 \
        --shard "$i/$shards" --record "$work/pretend$i.jsonl" --accelerator pretend >"$work/pretend$i.log" 2>&1 &
done
if [ "${RECORD_PROOFS:-1}" = 1 ]; then  # (minutes: the no-cuda cases each start a process)
    python3 tests/runtime/device_outcomes.py record "$out/gpu.json"
    CUDA_VISIBLE_DEVICES= python3 tests/runtime/device_outcomes.py record --pretend "$out/pretend.json"
    python3 tests/runtime/device_outcomes.py compare "$out/gpu.json" "$out/pretend.json"
fi
python3 tests/runtime/rnn_cells.py record "$out/rnn-cells.json"
python3 benchmarks/runtime_opinfo.py --modules --samples 2 --record "$out/modules-real.jsonl" --accelerator real
CUDA_VISIBLE_DEVICES= python3 benchmarks/runtime_opinfo.py --modules --samples 2 \
    --record "$out/modules-pretend.jsonl" --accelerator pretend
python3 benchmarks/runtime_opinfo.py --compare "$out/modules-real.jsonl" "$out/modules-pretend.jsonl" --show 3
python3 -m pytest -p no:cacheprovider tests/runtime -q -rs -n 8 --junitxml="$out/suite-gpu.xml" \
    >"$out/suite-gpu.txt" 2>&1
echo "suite on the GPU: exit $?"; tail -n 12 "$out/suite-gpu.txt"
CUDA_VISIBLE_DEVICES= python3 -m pytest -p no:cacheprovider tests/runtime -q -rs -n 8 \
    --junitxml="$out/suite-hidden.xml" >"$out/suite-hidden.txt" 2>&1
echo "suite with the GPU hidden: exit $?"; tail -n 12 "$out/suite-hidden.txt"
wait
cat "$work"/real*.jsonl >"$out/opinfo-real.jsonl"
cat "$work"/pretend*.jsonl >"$out/opinfo-pretend.jsonl"
tail -n 3 "$work"/*.log
python3 benchmarks/runtime_opinfo.py --compare "$out/opinfo-real.jsonl" "$out/opinfo-pretend.jsonl" --show 3
