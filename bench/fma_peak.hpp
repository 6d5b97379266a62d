// The machine's compute limit, measured: FMA throughput on the widest vectors the compiler
// targets (-march=native, bench/meson.build), so every GEMM figure can be printed as a
// fraction of what the cores can do rather than of a datasheet number.
#pragma once

namespace mg::bench {

// GFLOP/s (2 flops per lane per FMA) of independent FMA chains on `threads` threads: the
// best of `repeats` bursts of about 0.2 ms each.
double fma_peak_gflops(int threads, int repeats = 200);
// One burst of FMA chains on `threads` threads lasting about `seconds`, its GFLOP/s: a
// probe to interleave with timed calls, as long as they are, so a figure can also be read
// against the rate the cores gave at that time (a host that shares the cores, or runs a
// VM's vCPUs one at a time for a while, lowers both).
double fma_burst_gflops(int threads, double seconds = 2e-4);
// The vector ISA the measurement used ("AVX-512", "AVX2+FMA", "SSE/NEON (no FMA)").
const char* fma_peak_isa();

}  // namespace mg::bench
