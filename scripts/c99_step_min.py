#!/usr/bin/env python3
"""The fastest time of every step of a C99 JIT module, run standalone: robust on a busy machine.

Compiles a module from the JIT cache (its `.c`) with the JIT's flags and a driver that runs
mg_jit_run `runs` times on random inputs (integer inputs zero: valid labels) and prints, per
top-level step (`/* %k = op(...) */`), the fastest of its runs in ms, the slowest steps
first, then the fastest whole run. Minima, not means: under load (other jobs on the cores) a
mean mostly measures the load (scripts/profile_c99_steps.py times the real call, means).

  MG_C99_CACHE=/tmp/c build/bench/per_sample_bench --profile --threads 1 --iters 3  # fills the cache
  scripts/c99_step_min.py $(ls -S /tmp/c/*.c | head -1) [runs=200] [threads=1]     # TOP=30 for more rows

Each argument gets MG_ARG_MIB (default 16) MiB: raise it for modules with larger inputs.
"""
import re, subprocess, sys, os
from c99_steps import first_step_line, instrument
src = open(sys.argv[1]).read().split("\n")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 200
thr = sys.argv[3] if len(sys.argv) > 3 else "1"
out, labels = instrument(src, "mg_tick")
n = len(labels)
call = next(l for l in src if l.strip().startswith("return mg_jit_run("))
nargs = call.count("args[")
i64 = [int(m) for m in re.findall(r"\(const int64_t\*\)args\[(\d+)\]", call)]
arg_bytes = int(os.environ.get("MG_ARG_MIB", "16")) << 20
arena = int(re.search(r"arena (\d+) bytes", "\n".join(src[:20])).group(1))
timer = f"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double mg_cur[{n+1}], mg_min[{n+1}];
static struct timespec mg_last; static int mg_step = -1;
static void mg_tick(int k) {{ struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  if (mg_step >= 0) mg_cur[mg_step] = (t.tv_sec - mg_last.tv_sec) * 1e3 + (t.tv_nsec - mg_last.tv_nsec) * 1e-6;
  mg_step = k < {n} ? k : -1; mg_last = t; }}
"""
j = first_step_line(out)
out.insert(j, timer)
labs = ", ".join('"' + s + '"' for s in labels)
i64s = ", ".join(str(x) for x in i64) or "-1"
out.append(f"""
static const char* mg_lab[] = {{{labs}}};
int main(void) {{
  void* args[{nargs}]; int is64[] = {{{i64s}}}; int a, k, r; double tot, best = 1e30;
  void* ar; srand(1);
  for (a = 0; a < {nargs}; ++a) {{ float* p = aligned_alloc(64, {arg_bytes}); int isi = 0; size_t e;
    for (k = 0; k < (int)(sizeof is64 / sizeof *is64); ++k) isi |= is64[k] == a;
    if (isi) memset(p, 0, {arg_bytes}); else for (e = 0; e < {arg_bytes // 4}u; ++e) p[e] = (float)rand() / RAND_MAX - 0.5f;
    args[a] = p; }}
  ar = aligned_alloc(64, ({arena} + 63) / 64 * 64 + 64); memset(ar, 0, {arena});
  for (k = 0; k <= {n}; ++k) mg_min[k] = 1e30;
  for (r = 0; r < {runs}; ++r) {{ struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
    mg_jit_call(args, ar); clock_gettime(CLOCK_MONOTONIC, &t1);
    tot = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6; if (tot < best) best = tot;
    for (k = 0; k < {n}; ++k) if (mg_cur[k] < mg_min[k]) mg_min[k] = mg_cur[k]; }}
  for (k = 0; k < {n}; ++k) printf("%9.4f %s\\n", mg_min[k], mg_lab[k]);
  printf("%9.4f TOTAL(min whole run)\\n", best);
  return 0;
}}""")
import tempfile
d = tempfile.mkdtemp(prefix="mg_step_min_")
open(f"{d}/m.c", "w").write("\n".join(out))
cc = ["cc", "-std=c99", "-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math", "-fopenmp", "-w", "-D_ISOC11_SOURCE", "-D_POSIX_C_SOURCE=200809L"]
subprocess.check_call(cc + [f"{d}/m.c", "-o", f"{d}/m", "-lm"])
res = subprocess.run([f"{d}/m"], env=dict(os.environ, OMP_NUM_THREADS=thr), capture_output=True, text=True, check=True).stdout
lines = res.strip().split("\n")
print("\n".join(sorted(lines[:-1], key=lambda s: -float(s.split()[0]))[:int(os.environ.get("TOP", "16"))]))
print(lines[-1], " sum of step mins:", round(sum(float(l.split()[0]) for l in lines[:-1]), 4))
