#!/usr/bin/env bash
# The H200 validation run of docs/validation.md ("H200 run"): L1 kernels suite through the runner
# (cold, then twice with a warm compile cache), the plain pytest run for comparison, the L2
# matmul sweep through the runner, and a summary. Run from the repository root:
#   OUT=/tmp/out bash examples/kernels/run_h200.sh
# Needs git, python3 with torch + triton (+ pydantic, junitparser, pyyaml: carry them as wheels in
# .whl/ where missing — installed to /tmp/site, nothing else is installed).
set -u
OUT=${OUT:-/tmp/forksync-h200}; mkdir -p "$OUT"
ROOT=$(pwd)
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$ROOT
else
  export PYTHONPATH=$ROOT
fi
export PYTHONUNBUFFERED=1 FORKSYNC_RUNNER_ID=${FORKSYNC_RUNNER_ID:-h200-lease}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
python3 -c "import sys, torch, triton; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"
git --version || { echo "no git on this machine"; exit 3; }
# a scratch repository holding the kernels, one commit
KS=/tmp/ks; rm -rf $KS; mkdir -p $KS/examples; cp -r examples/kernels $KS/examples/
rm -f $KS/examples/kernels/run_h200.sh
(cd $KS && git init -q && git add -A && git -c user.email=ci@forksync -c user.name=ci commit -qm "reference kernels") || exit 1
SHA=$(git -C $KS rev-parse HEAD)
CFG=$KS/examples/kernels/suites.yml
t0=$(date +%s.%N); python3 -c "import torch, triton; torch.zeros(1, device='cuda'); torch.cuda.synchronize()"; t1=$(date +%s.%N)
echo "import torch+triton+CUDA init: $(python3 -c "print(round($t1 - $t0, 2))") s" | tee /tmp/startup.txt
for run in cold warm1 warm2; do
  python3 -m gpu_runner run --suite kernels --commit $SHA --repo $KS --config $CFG --platform h200 --out "$OUT/l1-$run.json"
done
# the same command without the runner (warm cache), in a plain checkout
(cd $KS && t0=$(date +%s.%N) && python3 -m pytest -q -p no:cacheprovider examples/kernels/test_kernels.py \
   --junitxml=/tmp/plain.xml -o junit_family=xunit1 | tail -1 && t1=$(date +%s.%N) && \
   echo "plain pytest wall: $(python3 -c "print(round($t1 - $t0, 2))") s" | tee -a /tmp/startup.txt)
python3 -m gpu_runner run --suite matmul-sweep --commit $SHA --repo $KS --config $CFG --platform h200 --out "$OUT/l2-sweep.json"
python3 -m gpu_runner run --suite matmul-sweep --commit $SHA --repo $KS --config $CFG --platform h200 --out "$OUT/l2-sweep2.json"
# saturated validation on the real machine: the same suite with no GPU visible must turn red
sed 's/env: {PYTHONDONTWRITEBYTECODE: "1"}/env: {PYTHONDONTWRITEBYTECODE: "1", CUDA_VISIBLE_DEVICES: ""}/' $CFG > /tmp/nogpu.yml
python3 -m gpu_runner run --suite kernels --commit $SHA --repo $KS --config /tmp/nogpu.yml --platform h200 --out "$OUT/l1-nogpu.json"
python3 examples/kernels/summarize_h200.py "$OUT" | tee "$OUT/summary.md"
