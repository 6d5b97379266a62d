// The machine's compute limit, measured: FMA throughput on the widest vectors the compiler
// targets (-march=native, bench/meson.build), so every GEMM figure can be printed as a
// fraction of what the cores can do rather than of a datasheet number.
#pragma once

namespace mg::bench {

// GFLOP/s (2 flops per lane per FMA) of independent FMA chains on `threads` threads: the
// best of `repeats` bursts of about 0.2 ms each.
double fma_peak_gflops(int threads, int repeats = 200);
// One burst of about 0.2 ms on `threads` threads, its GFLOP/s: a probe to interleave with
// timed calls, so a figure can also be read against the rate the cores gave at that time
// (on a shared host a busy SMT sibling can halve both).
double fma_burst_gflops(int threads);
// The vector ISA the measurement used ("AVX-512", "AVX2+FMA", "SSE/NEON (no FMA)").
const char* fma_peak_isa();

}  // namespace mg::bench
