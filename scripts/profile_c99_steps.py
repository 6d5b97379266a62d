#!/usr/bin/env python3
"""Times every step of a C99 JIT module: where the emitted code spends its time.

Rewrites a module in the JIT cache so each top-level step (one `/* %k = op(...) */` loop
of the entry function) adds its wall time to a counter, recompiles it with the JIT's flags
and records it in place of the original; every run then writes the mean ms per step to
/tmp/mg-c99-steps-<module>.txt. Usage:

  MG_C99_CACHE=/tmp/prof build/bench/transformer_bench --only miniGPT --threads 1  # fills the cache
  scripts/profile_c99_steps.py /tmp/prof                  # the largest module (or name one: mg_jit-<hash>)
  MG_C99_CACHE=/tmp/prof build/bench/transformer_bench --only miniGPT --threads 1  # runs the timed copy
  sort -rn /tmp/mg-c99-steps-mg_jit-<hash>.txt | head -30

The counters cost a clock read per step (a few % of a step with hundreds of loops). Use a
cache of its own: the timed object replaces the original there.
"""
import glob
import os
import subprocess
import sys
import tempfile

from c99_steps import first_step_line, instrument


def fnv1a(data: bytes) -> str:  # runtime/c99/jit_cache.cpp's content hash
    h = 1469598103934665603
    for c in data:
        h = ((h ^ c) * 1099511628211) & (2**64 - 1)
    return "%016x" % h


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    cache = sys.argv[1]
    key = sys.argv[2] if len(sys.argv) > 2 else os.path.basename(max(glob.glob(f"{cache}/mg_jit-*.c"), key=os.path.getsize))[:-2]
    src = open(f"{cache}/{key}.c").read().split("\n")
    out, labels = instrument(src, "mg_prof_tick", " mg_prof_dump();")
    n = len(labels)
    timer = f"""#include <stdio.h>
#include <time.h>
static double mg_prof_ms[{n + 1}];
static struct timespec mg_prof_last;
static int mg_prof_step = -1;
static long mg_prof_calls;
static void mg_prof_tick(int k) {{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  if (mg_prof_step >= 0)
    mg_prof_ms[mg_prof_step] += (t.tv_sec - mg_prof_last.tv_sec) * 1e3 + (t.tv_nsec - mg_prof_last.tv_nsec) * 1e-6;
  mg_prof_step = k < {n} ? k : -1;
  mg_prof_last = t;
}}
static const char* mg_prof_label[] = {{{", ".join('"' + s + '"' for s in labels)}}};
static void mg_prof_dump(void) {{
  FILE* f = fopen("/tmp/mg-c99-steps-{key}.txt", "w");
  int k;
  ++mg_prof_calls;
  if (!f) return;
  for (k = 0; k < {n}; ++k) fprintf(f, "%10.4f %s\\n", mg_prof_ms[k] / mg_prof_calls, mg_prof_label[k]);
  fclose(f);
}}
"""
    j = first_step_line(out)
    out.insert(j, timer)
    cc = os.environ.get("MG_CC", "cc").split()
    flags = ["-std=c99", "-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math",
             "-fopenmp", "-fPIC", "-shared", "-pipe", "-w"]  # runtime/c99/jit.cpp's
    with tempfile.TemporaryDirectory() as d:
        open(f"{d}/module.c", "w").write("\n".join(out))
        subprocess.run(cc + flags + ["module.c", "-o", "module.so", "-lm"], cwd=d, check=True)
        obj = open(f"{d}/module.so", "rb").read()
    checksum = fnv1a(obj)
    name = f"{key}-{checksum}.so"
    with open(f"{cache}/{name}", "wb") as f:
        f.write(obj)
    os.chmod(f"{cache}/{name}", 0o755)
    with open(f"{cache}/{key}.record", "w") as f:
        f.write(f"{name} {len(obj)} {checksum}\n")
    print(f"{key}: {n} steps timed; runs write /tmp/mg-c99-steps-{key}.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
