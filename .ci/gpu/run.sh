#!/bin/bash
# GPU run of the suite on a lent device machine: seed cases + a deterministic shard on CUDA,
# then the CUDA failures rerun on the same machine's CPU (same framework versions) for triage.
set -u
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
D=/tmp/site/distribution_conformance-0.1.0.dist-info; mkdir -p $D
printf 'Metadata-Version: 2.1\nName: distribution-conformance\nVersion: 0.1.0\n' > $D/METADATA
printf '[pytest11]\nconformance = conformance.run.plugin\n' > $D/entry_points.txt
export PYTHONPATH=/tmp/site:$PWD XLA_PYTHON_CLIENT_PREALLOCATE=false CONFORMANCE_JAX_CACHE=/tmp/jaxcache
nvidia-smi -L; nproc
python3 -c "import torch,jax,numpyro,gpytorch,linear_operator,numpy;print('torch',torch.__version__,torch.cuda.is_available(),'jax',jax.__version__,jax.devices(),'numpyro',numpyro.__version__,'gpytorch',gpytorch.__version__,'linear_operator',linear_operator.__version__,'numpy',numpy.__version__)" 2>&1 | tail -2
C="python3 -m conformance run -n 12 -q -p no:cacheprovider"
SEEDS="bernoulli-probs-int64-values or mvn-cov-batched-nondiagonal or torchsharp-1334 or batched-cov or batched-params or numpyro-1971-plate-in-scan"
echo "== seeds cuda"; date +%s
timeout -s INT 170 $C --device=cuda --results=$OUT/seeds-cuda.json cases/gradients.yaml cases/multivariate_normal.yaml cases/normal.yaml cases/numpyro_effects.yaml -k "$SEEDS" 2>&1 | tail -25
echo "== shard cuda"; date +%s
timeout -s INT ${SHARD_S:-260} $C --device=cuda --shard=${SHARD:-1/16} --results=$OUT/shard-cuda.json 2>&1 | tail -40
echo "== cpu rerun of cuda failures"; date +%s
python3 .ci/gpu/failed.py $OUT/seeds-cuda.json $OUT/shard-cuda.json > /tmp/failed.txt; wc -l < /tmp/failed.txt
if [ -s /tmp/failed.txt ]; then timeout -s INT 100 $C --device=cpu --results=$OUT/rerun-cpu.json $(cat /tmp/failed.txt) 2>&1 | tail -8; fi
date +%s
