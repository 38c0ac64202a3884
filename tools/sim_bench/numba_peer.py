#!/usr/bin/python3
"""numba's CUDA simulator on the two kernels gpulab-sim-bench times.

The same kernels as gpulab's vector_add and block_sums_shared (kernels/vector, kernels/reduction),
written with numba.cuda and run by numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1, set here before
numba is imported): it runs every CUDA thread of a block as a Python thread. Each timed launch is
followed by cuda.synchronize() and its output is checked against numpy; a wrong result is an
error, never a time. One small launch per kernel warms up first (not timed).

The simulator is slow (about 0.1 ms per element for vector add and 2 ms per element for the
reduction at 2^14 elements), so the default is 2 repetitions per kernel; progress goes to stderr.

Prints JSON to stdout. Run with Debian's /usr/bin/python3 (python3-numba, python3-numpy):

    /usr/bin/python3 tools/sim_bench/numba_peer.py [--elements N] [--repetitions R]

Exit codes: 0 success, 1 failure (wrong result, simulator not active), 2 bad arguments.
"""

import argparse
import json
import os
import platform
import sys
import time

# Must be set before numba is imported: numba reads it once, at import.
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

try:
    import numpy as np
    import numba
    from numba import cuda, float32
except ImportError as error:
    sys.exit(f"numba_peer: error: {error} (install with: apt-get install -y python3-numba, "
             f"and run with /usr/bin/python3)")

BLOCK = 256  # threads per block, and elements per block for the reduction
SCHEMA_VERSION = 1

# A 256-element float32 tree sum has at most 8 roundings on any path (see sim_bench.cpp).
TREE_SUM_REL_TOLERANCE = 1e-6  # times the sum of |x| over the block


@cuda.jit
def vector_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:  # the last block may run past the end
        c[i] = a[i] + b[i]


@cuda.jit
def block_sums_shared(values, partials, n):
    partial = cuda.shared.array(BLOCK, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK + t
    if i < n:
        partial[t] = values[i]
    else:
        partial[t] = float32(0.0)
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            partial[t] += partial[t + stride]
        # every thread's sum of this step is written before the next step reads it
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partials[cuda.blockIdx.x] = partial[0]


def check_simulator():
    """Fails unless numba really runs kernels in its CUDA simulator."""
    if not numba.config.ENABLE_CUDASIM or not isinstance(
            vector_add, numba.cuda.simulator.kernel.FakeCUDAKernel):
        sys.exit("numba_peer: error: numba's CUDA simulator is not active "
                 "(NUMBA_ENABLE_CUDASIM=1 did not take effect)")


def ceil_div(n, d):
    return (n + d - 1) // d


def verify_add(expected, got, what):
    # a + b is one float32 rounding in numpy and in the kernel: the same bits.
    bad = np.flatnonzero(~(np.abs(got - expected) <= 0.0))  # NaN (unwritten) fails
    if bad.size:
        i = bad[0]
        raise ValueError(f"{what}: index {i}: expected {expected[i]}, got {got[i]}, tolerance 0")


def verify_block_sums(values, got, what):
    blocks = got.size
    padded = np.zeros(blocks * BLOCK, dtype=np.float64)
    padded[:values.size] = values
    per_block = padded.reshape(blocks, BLOCK)
    expected = per_block.sum(axis=1)
    tolerance = TREE_SUM_REL_TOLERANCE * np.abs(per_block).sum(axis=1)
    bad = np.flatnonzero(~(np.abs(got.astype(np.float64) - expected) <= tolerance))
    if bad.size:
        b = bad[0]
        raise ValueError(f"{what}: block {b}: expected {expected[b]}, got {got[b]}, "
                         f"tolerance {tolerance[b]}")


def poisoned(n):
    return cuda.to_device(np.full(n, np.nan, dtype=np.float32))


def time_launch(launch):
    start = time.perf_counter()
    launch()
    cuda.synchronize()
    return time.perf_counter() - start


def bench_vector_add(a, b, repetitions):
    n = a.size
    expected = a + b
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    # Warm-up: one block, not timed.
    d_c = poisoned(n)
    vector_add[1, BLOCK](d_a, d_b, d_c, min(n, BLOCK))
    cuda.synchronize()
    times = []
    for rep in range(repetitions):
        d_c = poisoned(n)
        seconds = time_launch(lambda: vector_add[ceil_div(n, BLOCK), BLOCK](d_a, d_b, d_c, n))
        verify_add(expected, d_c.copy_to_host(), "vector_add on numba's simulator")
        progress(f"vector_add: run {rep + 1}/{repetitions}: {seconds:.2f} s")
        times.append(seconds)
    return times


def bench_block_sums(values, repetitions):
    n = values.size
    blocks = ceil_div(n, BLOCK)
    d_values = cuda.to_device(values)
    # Warm-up: one block, not timed.
    d_partials = poisoned(1)
    block_sums_shared[1, BLOCK](d_values, d_partials, min(n, BLOCK))
    cuda.synchronize()
    times = []
    for rep in range(repetitions):
        d_partials = poisoned(blocks)
        seconds = time_launch(
            lambda: block_sums_shared[blocks, BLOCK](d_values, d_partials, n))
        verify_block_sums(values, d_partials.copy_to_host(),
                          "block_sums_shared on numba's simulator")
        progress(f"block_sums_shared: run {rep + 1}/{repetitions}: {seconds:.2f} s")
        times.append(seconds)
    return times


def progress(message):
    print(f"numba_peer: {message}", file=sys.stderr, flush=True)


def result(kernel, times):
    times_ms = [t * 1e3 for t in times]
    return {
        "kernel": kernel,
        "implementation": "numba_cudasim",
        "verified": True,
        "median_time_ms": float(np.median(times_ms)),
        "min_time_ms": min(times_ms),
        "samples": len(times_ms),
        "sample_times_ms": times_ms,
    }


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer")
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def main():
    parser = argparse.ArgumentParser(
        description="Times numba's CUDA simulator on vector add and a 256-thread shared-memory "
                    "block reduction (CPU wall-clock time); prints JSON to stdout.")
    parser.add_argument("--elements", type=positive_int, default=16384,
                        help="floats per kernel (default 16384 = 2^14)")
    parser.add_argument("--repetitions", type=positive_int, default=2,
                        help="timed launches per kernel (default 2; about 30 s each for the "
                             "reduction at 2^14)")
    args = parser.parse_args()
    check_simulator()

    random = np.random.default_rng(1)
    a = random.uniform(-1.0, 1.0, args.elements).astype(np.float32)
    b = random.uniform(-1.0, 1.0, args.elements).astype(np.float32)
    try:
        benchmarks = [
            result("vector_add", bench_vector_add(a, b, args.repetitions)),
            result("block_sums_shared", bench_block_sums(a, args.repetitions)),
        ]
    except ValueError as error:
        print(f"numba_peer: wrong result, not timed: {error}", file=sys.stderr)
        return 1

    report = {
        "context": {
            "schema": "gpulab-numba-peer",
            "schema_version": SCHEMA_VERSION,
            "timing": "CPU wall-clock time (time.perf_counter) per launch including "
                      "cuda.synchronize(), numba's CUDA simulator; not GPU time",
            "numba_version": numba.__version__,
            "numpy_version": np.__version__,
            "python_version": platform.python_version(),
            "python": sys.executable,
            "cudasim": True,
            "elements": args.elements,
            "block_threads": BLOCK,
            "warmup": "one untimed launch of one block per kernel",
            "repetitions": args.repetitions,
        },
        "benchmarks": benchmarks,
    }
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
