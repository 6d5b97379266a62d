"""Shared by scripts/profile_c99_steps.py and scripts/c99_step_min.py: find the top-level
steps of a cached C99 JIT module's entry function and put a clock tick before each."""


def instrument(src, tick, at_end=""):
    """`src`: the module's lines. Returns (lines, labels): `tick(k);` before step k (a
    `/* %k = op(...) */` loop, or a loop group `/* steps ... */`, which is one step: its
    time would otherwise go to the step before), `tick(n);` + `at_end` before the entry's
    `return 0;`, and the module's own header replaced by stdint's (it is not cached)."""
    start = next(i for i, l in enumerate(src) if l.startswith("int mg_jit_run("))
    end = next(i for i in range(start, len(src)) if src[i] == "}")
    out, labels = [], []
    for i, l in enumerate(src):
        if start < i <= end and (l.startswith("  /* %") or l.startswith("  /* steps")):
            out.append(f"  {tick}({len(labels)});")
            labels.append(l[5:].split("  ")[0][:90].replace("\\", "").replace('"', ""))
        if start < i < end and l == "  return 0;" and src[i + 1] == "}":
            out.append(f"  {tick}({len(labels)});{at_end}")
        out.append("#include <stdint.h>" if l.startswith('#include "mg_jit') else l)
    return out, labels
