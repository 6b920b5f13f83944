#!/usr/bin/env bash
# gpu-backends/run_on_gpu.sh -- build, verify and benchmark every CUDA AES and Camellia kernel in one call.
#
#   bash gpu-backends/run_on_gpu.sh [OUTDIR]        (default OUTDIR: results/gpu)
#   bash gpu-backends/run_on_gpu.sh --files-only [OUTDIR]   (step 6's file tables alone, any machine:
#                                                            files.md and files-startup.md)
#
# Environment: SIZES (default 1M,16M,256M,1G), REPS (5), STREAMS (1,4), KEY_BITS (128),
# JOBS (nproc), PYTHON=0 to skip the Python part, BUILD_DIR (build/gpu-standalone).
#
# Steps (each logged on stderr, results under OUTDIR):
#   1. the machine: nvidia-smi (name, clocks, power limit)             -> nvidia-smi.txt
#   2. a Python-free build of gpu-backends/ (CMake + nvcc only: works on a bare GPU box with no
#      network) -> BUILD_DIR/s2mc-gpu-selftest, BUILD_DIR/s2mc-gpu-bench
#   3. verification: every kernel x mode x key size x direction, tails, counter carries, multi-chunk
#      and multi-stream inputs, the empty input, keystream op, GPU == CPU emulator, against the
#      reference anchored to FIPS-197 / SP 800-38A vectors                 -> selftest.txt
#   4. benchmark grid: every kernel (coarse, extended, each optimised configuration) x measure
#      (keystream, device-resident, host-serial, host-overlap) x size -> gpu-bench.md, gpu-bench.csv
#      Seed 002's methods: A = device-resident (no transfer), B = host-overlap (transfers
#      overlapped with the kernels over STREAMS streams), C = host-serial (copy in, run, copy out).
#   4b. the same grid with AES-256 when KEY_BITS is 128 (AES-256 beside AES-128)
#                                                          -> gpu-bench-256.md, gpu-bench-256.csv
#   4c. Camellia: seed 002's coarse kernel and the optimised one, the same measures and sizes (A/B/C)
#                                            -> gpu-bench-camellia.md, gpu-bench-camellia.csv
#   4d. seed 002's Table 2 for our kernels: registers, shared memory, CTAs per SM, occupancy of
#       every AES and Camellia kernel (cudaFuncGetAttributes + the occupancy API) -> occupancy.md
#   4e. the 1 MB host-serial question (docs/gpu.md, "The 1 MB host-serial oddity"): host-serial
#       and host-overlap at 1M alone in fresh processes, 30 repetitions each kept in order with
#       their stage breakdown, under warm-up 0 / 1 / 20, S2MC_CUDA_SYNC spin / yield / blocking,
#       and right after a 1 GB device-resident run (the grid's order) -> host1m-*.csv, host1m.md
#   5. if the Python environment is usable (.venv from `make setup`): the gpu-marked pytest suite
#      and `s2mc gpu --kernel all` (records in the tidy schema + manifest)  -> pytest-gpu.txt,
#      gpu.parquet, gpu.manifest.json, gpu-cli.md
#   6. with Python too: file encryption side by side on a FILE_BYTES (default 2G)
#      page-cached file in FILE_DIR (default /dev/shm): cp, openssl enc -aes-128-ctr, s2mc encrypt
#      (native, every CPU) and s2mc encrypt --backend cuda and --backend opencl, wall seconds of each
#      and its speed against cp and openssl, outputs compared; Camellia too (openssl enc
#      -camellia-128-ctr beside the cuda and opencl backends) -> files.md; the GPU file path
#      before the ring and with it, side by side (bench/bench_gpu_files.py) -> files-ring.md; where a
#      command-line `s2mc encrypt` spends its time (process start, imports, options, backend start-up,
#      encryption, close, exit) beside cp and the same call in one process, native, cuda and opencl
#      (bench/bench_encrypt_startup.py) -> files-startup.md; and seeds 001/004 measured on this host's CPUs (python -m
#      s2mc.experiments.seeds_native) -> seeds_native.parquet, seeds_native.txt
#   7. with Python too (seed 004's question: the cost of portability): the OpenCL backend on
#      this GPU's OpenCL (NVIDIA's ICD; `make setup` adds the loader and PoCL): its tests on the GPU,
#      seed 004's segment calibration, then `s2mc gpu --backend opencl` and `s2mc gpu --backend cuda
#      --kernel coarse,optimised` on the same sizes (device-resident = the kernel alone, and host to
#      host), AES and Camellia, and the table CUDA / OpenCL per size -> opencl-*.md, opencl*.parquet,
#      cuda-vs-opencl.md; why the OpenCL ring is no faster than the old pipeline (docs/gpu.md): host
#      to host at 16M..1G segments and the file ring with 1, 2 and 4 queues beside cp
#      (bench/bench_opencl_ring.py) -> opencl-ring-check.md
# The Markdown table of Gbps is printed on stdout at the end. Exit status: non-zero when any
# verification failed.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${OUT:-results/gpu}}
[ "$OUT" = --files-only ] && OUT=${2:-results/gpu}
SIZES=${SIZES:-1M,16M,256M,1G}
REPS=${REPS:-5}
STREAMS=${STREAMS:-1,4}
KEY_BITS=${KEY_BITS:-128}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
BUILD_DIR=${BUILD_DIR:-build/gpu-standalone}
PYTHON=${PYTHON:-1}
mkdir -p "$OUT"
log() { echo "== $*" >&2; }
fail=0
t_start=$(date +%s)

# files_side_by_side DIR BYTES: cp, openssl and s2mc (native, cuda, opencl) on one page-cached file
# -> files.md: the best of 3 wall times and each one's speed against cp's and openssl's (time of cp
# or openssl / time of the command: 1.00 is as fast). Integer nanoseconds in bash arithmetic: the
# GPU image has no bc.
files_side_by_side() {
  local d k iv f name t0 ns best cp_ns ssl_ns ssl_cam_ns
  d=$(mktemp -d "$1/s2mc-files-XXXXXX") || return 1
  k=000102030405060708090a0b0c0d0e0f; iv=f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff
  head -c "$2" /dev/urandom >"$d/in.bin"
  secs() { printf '%d.%03d' $(( $1 / 1000000000 )) $(( $1 / 1000000 % 1000 )); }
  ratio() { [ "$1" -gt 0 ] && [ "$2" -gt 0 ] && printf '%d.%02d' $(( $1 / $2 )) $(( $1 * 100 / $2 % 100 )) || printf -- '-'; }
  {
    echo "| command | wall s (best of 3) | speed vs cp | speed vs openssl (same cipher) |"
    echo "|---|---:|---:|---:|"
    for name in cp openssl s2mc-native s2mc-cuda s2mc-opencl openssl-camellia s2mc-cuda-camellia s2mc-opencl-camellia; do
      best=""
      for _ in 1 2 3; do
        t0=$(date +%s%N)
        case $name in
          cp) cp "$d/in.bin" "$d/cp.bin" ;;
          openssl) openssl enc -aes-128-ctr -K $k -iv $iv -in "$d/in.bin" -out "$d/openssl.bin" ;;
          s2mc-native) .venv/bin/s2mc encrypt -q --in "$d/in.bin" --out "$d/native.bin" --key $k --iv $iv ;;
          s2mc-cuda) .venv/bin/s2mc encrypt -q --backend cuda --in "$d/in.bin" --out "$d/cuda.bin" --key $k --iv $iv ;;
          s2mc-opencl) .venv/bin/s2mc encrypt -q --backend opencl --in "$d/in.bin" --out "$d/opencl.bin" --key $k --iv $iv ;;
          openssl-camellia) openssl enc -camellia-128-ctr -K $k -iv $iv -in "$d/in.bin" -out "$d/openssl-camellia.bin" ;;
          s2mc-cuda-camellia) .venv/bin/s2mc encrypt -q --backend cuda --cipher camellia --in "$d/in.bin" \
                                --out "$d/cuda-camellia.bin" --key $k --iv $iv ;;
          s2mc-opencl-camellia) .venv/bin/s2mc encrypt -q --backend opencl --cipher camellia --in "$d/in.bin" \
                                  --out "$d/opencl-camellia.bin" --key $k --iv $iv ;;
        esac 2>>"$OUT/files.log" || { echo "| $name | failed (files.log) | - | - |"; continue 2; }
        ns=$(( $(date +%s%N) - t0 ))
        if [ -z "$best" ] || [ "$ns" -lt "$best" ]; then best=$ns; fi
      done
      case $name in cp) cp_ns=$best ;; openssl) ssl_ns=$best ;; openssl-camellia) ssl_cam_ns=$best ;; esac
      local ssl=${ssl_ns:-0}; [[ $name == *camellia ]] && ssl=${ssl_cam_ns:-0}
      echo "| $name | $(secs "$best") | $(ratio "${cp_ns:-0}" "$best") | $(ratio "$ssl" "$best") |"
    done
    for f in native cuda opencl; do
      [ -f "$d/$f.bin" ] || continue
      cmp -s "$d/openssl.bin" "$d/$f.bin" && echo "- $f output = openssl's" || echo "- $f output DIFFERS from openssl's"
    done
    for f in cuda opencl; do
      [ -f "$d/$f-camellia.bin" ] || continue
      cmp -s "$d/openssl-camellia.bin" "$d/$f-camellia.bin" && echo "- $f Camellia output = openssl -camellia-128-ctr's" ||
        echo "- $f Camellia output DIFFERS from openssl -camellia-128-ctr's"
    done
  } >"$OUT/files.md"
  rm -rf "$d"
}

# cuda_vs_opencl: step 7 (the OpenCL backend on this GPU beside the CUDA kernels)
cuda_vs_opencl() {
  local py=.venv/bin/python s2=.venv/bin/s2mc c
  log "7. OpenCL on this GPU beside CUDA"
  $s2 info >"$OUT/opencl-info.txt" 2>&1
  grep -A9 '^OpenCL' "$OUT/opencl-info.txt" >&2
  if ! $py -c "import sys; from s2mc.gpu import opencl; st = opencl.status(); \
      sys.exit(0 if any(d['type'] == 'GPU' for d in st['devices']) else 1)"; then
    log "no OpenCL GPU device (is /etc/OpenCL/vendors/nvidia.icd there? the driver's libnvidia-opencl?); step 7 skipped"
    return 0
  fi
  # the default device is the first GPU; the cache keeps the calibrations of this run apart
  export S2MC_CACHE_DIR="$OUT/opencl-cache"
  $py -m pytest -q tests/test_gpu_opencl.py 2>&1 | tee "$OUT/pytest-opencl.txt" | tail -3 >&2
  [ "${PIPESTATUS[0]}" -ne 0 ] && { log "OpenCL tests FAILED on the GPU"; fail=1; }
  for c in aes camellia; do
    $s2 gpu --backend opencl --calibrate --budget 10 --cipher $c --key-bits "$KEY_BITS" \
      >"$OUT/opencl-calibration-$c.md" 2>&1 || log "OpenCL calibration ($c) failed"
    $s2 gpu --backend opencl --cipher $c --bytes "$SIZES" --reps "$REPS" --key-bits "$KEY_BITS" --quiet \
      --out "$OUT/opencl-$c.parquet" --markdown "$OUT/opencl-$c.md" >"$OUT/opencl-$c.stdout" 2>"$OUT/opencl-$c.log" ||
      { log "s2mc gpu --backend opencl --cipher $c failed"; tail -3 "$OUT/opencl-$c.log" >&2; }
    $s2 gpu --backend cuda --cipher $c --kernel coarse,optimised --measure device,host --streams 1 --bytes "$SIZES" \
      --reps "$REPS" --key-bits "$KEY_BITS" --quiet --out "$OUT/cuda-vs-opencl-$c.parquet" \
      >"$OUT/cuda-vs-opencl-$c.stdout" 2>"$OUT/cuda-vs-opencl-$c.log" || log "s2mc gpu --cipher $c (CUDA side) failed"
  done
  # one table: Gbps of each, and CUDA / OpenCL per size (same GPU, same process order)
  # why the ring is no faster than the old pipeline on this platform (docs/gpu.md's hypothesis)
  FILE_DIR=${FILE_DIR:-$( [ -d /dev/shm ] && echo /dev/shm || echo /tmp )}
  $py bench/bench_opencl_ring.py --size 1G --reps 3 --dir "$FILE_DIR" >"$OUT/opencl-ring-check.md" 2>&1 ||
    log "bench_opencl_ring failed (see $OUT/opencl-ring-check.md)"
  $py - "$OUT" >"$OUT/cuda-vs-opencl.md" 2>>"$OUT/cuda-vs-opencl.log" <<'PYEOF'
import sys
from pathlib import Path
import pandas as pd
out = Path(sys.argv[1])
frames = [pd.read_parquet(p) for p in sorted(out.glob("opencl-*.parquet")) + sorted(out.glob("cuda-vs-opencl-*.parquet"))]
df = pd.concat(frames)
df = df[df.metric == "bytes_per_second"].assign(gbps=lambda d: d.value * 8 / 1e9)
t = df.pivot_table(index=["workload", "variant"], columns="bytes", values="gbps")
sizes = list(t.columns)
print("| workload | variant | " + " | ".join(f"{int(n) >> 20} MiB" for n in sizes) + " |")
print("|---|---|" + "---:|" * len(sizes))
for (w, v), row in t.iterrows():
    print(f"| {w} | {v} | " + " | ".join("-" if pd.isna(x) else f"{x:.1f}" for x in row) + " |")
print()
# every CUDA kernel's row (optimised is recorded under its configuration's name, optimised-t4b2)
# against the OpenCL row that measures the same thing
same = {"device-resident": "opencl/device-resident", "host-serial": "opencl/host-segmented",
        "host-overlap-s4": "opencl/host-overlap-q2"}
for w, cu in t.index:
    ocl = same.get(cu.split("/", 1)[-1])
    if not cu.startswith("opencl/") and ocl and (w, ocl) in t.index:
        r = (t.loc[(w, cu)] / t.loc[(w, ocl)]).round(2)
        print(f"- {w}: CUDA {cu} / OpenCL {ocl}: " + ", ".join(f"{int(n) >> 20} MiB {v}" for n, v in r.items()))
PYEOF
  cat "$OUT/cuda-vs-opencl.md" >&2
}

# startup_table DIR SIZE: where a command-line `s2mc encrypt` spends its time (process start, imports,
# options, backend start-up, encryption, close, exit), every backend that runs here, beside cp and
# the same call in one process, STARTUP_ROUNDS (3) rounds -> files-startup.md
startup_table() {
  if ! .venv/bin/python bench/bench_encrypt_startup.py --backend native,cuda,opencl --size "$2" \
       --rounds "${STARTUP_ROUNDS:-3}" --dir "$1" >"$OUT/files-startup.md" 2>&1; then
    log "bench_encrypt_startup failed (see $OUT/files-startup.md)"
    return 1
  fi
}

# `run_on_gpu.sh --files-only [OUTDIR]`: step 6's file table alone (FILE_BYTES, FILE_DIR as below)
if [ "${1:-}" = "--files-only" ]; then
  FILE_BYTES=${FILE_BYTES:-2G}
  FILE_DIR=${FILE_DIR:-$( [ -d /dev/shm ] && echo /dev/shm || echo /tmp )}
  files_side_by_side "$FILE_DIR" "$(numfmt --from=iec "$FILE_BYTES")" || exit 1
  startup_table "$FILE_DIR" "$FILE_BYTES" || exit 1
  cat "$OUT/files.md"
  exit 0
fi


log "1. machine"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit,pcie.link.gen.max,pcie.link.width.max \
    --format=csv | tee "$OUT/nvidia-smi.txt" >&2
  nvidia-smi >>"$OUT/nvidia-smi.txt" 2>&1 || true
else
  log "nvidia-smi not found"
fi
{ echo "date: $(date -u +%FT%TZ)"; echo "host: $(hostname)"; echo "git: $(git rev-parse HEAD 2>/dev/null)";
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -1)"; } >"$OUT/build-info.txt"

log "2. build (CMake + nvcc, no Python) in $BUILD_DIR"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
if ! cmake -S gpu-backends -B "$BUILD_DIR" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 ||
   ! cmake --build "$BUILD_DIR" -j "$JOBS" >>"$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log" >&2
  log "build failed (see $OUT/build.log)"
  exit 1
fi
if [ ! -x "$BUILD_DIR/s2mc-gpu-selftest" ]; then
  tail -30 "$OUT/build.log" >&2
  log "the CUDA backend was not built (nvcc missing?) -- see $OUT/build.log"
  exit 1
fi
log "built in $(( $(date +%s) - t_start )) s"

log "3. verify every kernel"
"$BUILD_DIR/s2mc-gpu-selftest" | tee "$OUT/selftest.txt" | grep -E "^(GPU|FAIL|[0-9]+ passed)" >&2
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 2 ]; then
  cat "$OUT/selftest.txt" >&2
  log "no GPU here: the build is done, nothing to verify or measure"
  exit 1
elif [ "$rc" -ne 0 ]; then
  log "self-test FAILED (exit $rc)"
  fail=1
fi

log "4. benchmark grid (sizes $SIZES, reps $REPS, streams $STREAMS, AES-$KEY_BITS)"
"$BUILD_DIR/s2mc-gpu-bench" --kernels all --sizes "$SIZES" --reps "$REPS" --streams "$STREAMS" \
  --key-bits "$KEY_BITS" --markdown "$OUT/gpu-bench.md" --csv "$OUT/gpu-bench.csv" \
  >"$OUT/gpu-bench.stdout" 2> >(tee "$OUT/gpu-bench.log" >&2)
[ $? -ne 0 ] && { log "benchmark reported errors"; fail=1; }

if [ "$KEY_BITS" = 128 ]; then
  log "4b. benchmark grid with AES-256"
  "$BUILD_DIR/s2mc-gpu-bench" --kernels all --sizes "$SIZES" --reps "$REPS" --streams "$STREAMS" \
    --key-bits 256 --markdown "$OUT/gpu-bench-256.md" --csv "$OUT/gpu-bench-256.csv" \
    >"$OUT/gpu-bench-256.stdout" 2>"$OUT/gpu-bench-256.log" || { log "AES-256 benchmark reported errors"; fail=1; }
fi

log "4c. benchmark grid, Camellia-$KEY_BITS (seed 002's coarse kernel and the optimised one)"
"$BUILD_DIR/s2mc-gpu-bench" --cipher camellia --sizes "$SIZES" --reps "$REPS" --streams "$STREAMS" \
  --key-bits "$KEY_BITS" --markdown "$OUT/gpu-bench-camellia.md" --csv "$OUT/gpu-bench-camellia.csv" \
  >"$OUT/gpu-bench-camellia.stdout" 2>"$OUT/gpu-bench-camellia.log" || { log "Camellia benchmark reported errors"; fail=1; }

log "4d. registers, shared memory and occupancy of every kernel (seed 002's Table 2)"
{ for c in aes camellia; do "$BUILD_DIR/s2mc-gpu-bench" --occupancy --cipher $c --key-bits "$KEY_BITS" || fail=1; echo; done
} >"$OUT/occupancy.md" 2>"$OUT/occupancy.log"

log "4e. host-serial at 1 MB: repetitions in order, stage breakdown, warm-up and sync modes"
{
  h1m() {  # NAME [env...] -- bench args
    local name=$1; shift
    env "$@" "$BUILD_DIR/s2mc-gpu-bench" --kernels optimised --sizes 1M --reps 30 --streams 1,4 \
      --csv "$OUT/host1m-$name.csv" --markdown "$OUT/host1m-$name.md" ${H1M_ARGS:-} >/dev/null 2>&1 \
      || echo "($name: the benchmark reported errors)"
    echo "### $name"; echo; sed -n '/^Host measures/,$p' "$OUT/host1m-$name.md"; echo
    echo "times (s, in order): "; grep -E "host-(serial|overlap)" "$OUT/host1m-$name.csv" | cut -d, -f2,14; echo
  }
  H1M_ARGS="--warmup 0" h1m warmup0 S2MC_CUDA_SYNC=auto
  H1M_ARGS="--warmup 1" h1m warmup1 S2MC_CUDA_SYNC=auto
  H1M_ARGS="--warmup 20" h1m warmup20 S2MC_CUDA_SYNC=auto
  for m in spin yield blocking; do H1M_ARGS="--warmup 1" h1m "sync-$m" S2MC_CUDA_SYNC=$m; done
  # the grid's order: device-resident 1 MB and 1 GB, then the host runs (1 MB first)
  "$BUILD_DIR/s2mc-gpu-bench" --kernels optimised --sizes 1M,1G --reps 30 --streams 1,4 \
    --csv "$OUT/host1m-after-1g.csv" --markdown "$OUT/host1m-after-1g.md" >/dev/null 2>&1
  echo "### after-1g (host rows: 1M is the first host run, after device-resident 1G)"; echo; sed -n '/^Host measures/,$p' "$OUT/host1m-after-1g.md"
} >"$OUT/host1m.md" 2>&1

if [ "$PYTHON" = 1 ]; then
  log "5. Python: pytest -m gpu and s2mc gpu (records)"
  py=.venv/bin/python
  if ! $py -c "import s2mc.gpu, pytest, cryptography, pandas" 2>/dev/null; then
    log "no usable .venv; trying make setup (needs the package registries)"
    timeout 600 make setup >"$OUT/make-setup.log" 2>&1 || log "make setup failed (see $OUT/make-setup.log)"
  fi
  if $py -c "import s2mc.gpu, pytest, cryptography, pandas" 2>/dev/null; then
    $py -m pytest -q -m gpu tests/test_gpu_cuda.py tests/test_gpu_status.py tests/test_gpu_emulation.py tests/test_gpu_camellia.py \
      2>&1 | tee "$OUT/pytest-gpu.txt" | tail -3 >&2
    [ "${PIPESTATUS[0]}" -ne 0 ] && { log "pytest -m gpu FAILED"; fail=1; }
    .venv/bin/s2mc gpu --kernel all --bytes "$SIZES" --reps "$REPS" --streams "$STREAMS" \
      --key-bits "$KEY_BITS" --quiet --out "$OUT/gpu.parquet" --markdown "$OUT/gpu-cli.md" \
      >"$OUT/gpu-cli.stdout" 2>"$OUT/gpu-cli.log" || { log "s2mc gpu failed"; tail -3 "$OUT/gpu-cli.log" >&2; }
    .venv/bin/s2mc gpu --cipher camellia --bytes "$SIZES" --reps "$REPS" --streams "$STREAMS" \
      --key-bits "$KEY_BITS" --quiet --out "$OUT/gpu-camellia.parquet" --markdown "$OUT/gpu-camellia-cli.md" \
      >"$OUT/gpu-camellia-cli.stdout" 2>"$OUT/gpu-camellia-cli.log" || { log "s2mc gpu --cipher camellia failed"; tail -3 "$OUT/gpu-camellia-cli.log" >&2; }
    FILE_BYTES=${FILE_BYTES:-2G}
    FILE_DIR=${FILE_DIR:-$( [ -d /dev/shm ] && echo /dev/shm || echo /tmp )}
    log "6. files side by side ($FILE_BYTES in $FILE_DIR) and seeds 001/004 on this host's CPUs"
    files_side_by_side "$FILE_DIR" "$(numfmt --from=iec "$FILE_BYTES")" && cat "$OUT/files.md" >&2
    # the file path before the ring (the Python pipeline in pieces) and the ring, side by side
    FILE_DIR="$FILE_DIR" $py bench/bench_gpu_files.py --backend cuda,opencl --size "$FILE_BYTES" --rounds 3 \
      >"$OUT/files-ring.md" 2>&1 || log "bench_gpu_files failed (see $OUT/files-ring.md)"
    startup_table "$FILE_DIR" "$FILE_BYTES" && cat "$OUT/files-startup.md" >&2
    $py -m s2mc.experiments.seeds_native --out "$OUT/seeds_native.parquet" >"$OUT/seeds_native.txt" 2>&1 ||
      { log "seeds_native failed"; tail -3 "$OUT/seeds_native.txt" >&2; }
    cuda_vs_opencl
  else
    log "skipping the Python part: no Python environment with s2mc, pytest and cryptography"
  fi
fi

log "done in $(( $(date +%s) - t_start )) s; results in $OUT"
echo
echo "## CUDA AES on $(head -2 "$OUT/nvidia-smi.txt" 2>/dev/null | tail -1 | cut -d, -f1)"
echo
echo "Command: \`bash gpu-backends/run_on_gpu.sh\` (SIZES=$SIZES REPS=$REPS STREAMS=$STREAMS), $(date -u +%F)"
echo "Self-test: $(grep -E '^[0-9]+ passed' "$OUT/selftest.txt" || echo 'did not finish')"
echo
cat "$OUT/gpu-bench.md" 2>/dev/null
[ -f "$OUT/gpu-bench-256.md" ] && { echo; echo "AES-256:"; echo; cat "$OUT/gpu-bench-256.md"; }
[ -f "$OUT/gpu-bench-camellia.md" ] && { echo; echo "Camellia:"; echo; cat "$OUT/gpu-bench-camellia.md"; }
[ -s "$OUT/occupancy.md" ] && { echo; echo "Registers, shared memory, occupancy (seed 002 Table 2):"; echo; cat "$OUT/occupancy.md"; }
[ -f "$OUT/files.md" ] && { echo; echo "Files ($FILE_BYTES, page-cached):"; echo; cat "$OUT/files.md"; }
[ -s "$OUT/files-startup.md" ] && { echo; echo "Where a command-line s2mc encrypt spends its time:"; cat "$OUT/files-startup.md"; }
[ -s "$OUT/cuda-vs-opencl.md" ] && { echo; echo "CUDA vs OpenCL on this GPU (Gbps; the cost of portability):"; echo; cat "$OUT/cuda-vs-opencl.md"; }
[ -s "$OUT/opencl-ring-check.md" ] && { echo; echo "The OpenCL ring's check:"; cat "$OUT/opencl-ring-check.md"; }
exit $fail
