"""Shared by scripts/profile_c99_steps.py and scripts/c99_step_min.py: find the top-level
steps of a cached C99 JIT module's entry function and put a clock tick before each."""


def first_step_line(src):
    """The line before which the steps begin: the first step function (a big module's
    steps are functions of ~300 lines that the entry calls in order), else the entry."""
    return next((i for i, l in enumerate(src) if l.startswith("static MG_NOINLINE int mg_step")),
                next(i for i, l in enumerate(src) if l.startswith("int mg_jit_run(")))


def instrument(src, tick, at_end=""):
    """`src`: the module's lines. Returns (lines, labels): `tick(k);` before step k (a
    `/* %k = op(...) */` loop, or a loop group `/* steps ... */`, which is one step: its
    time would otherwise go to the step before), in the entry or in the step functions
    before it, `tick(n);` + `at_end` before the entry's `return 0;`, and the module's own
    header replaced by stdint's (it is not cached). Declare `tick` before first_step_line."""
    start = first_step_line(src)
    entry = next(i for i, l in enumerate(src) if l.startswith("int mg_jit_run("))
    end = next(i for i in range(entry, len(src)) if src[i] == "}")
    out, labels = [], []
    for i, l in enumerate(src):
        if start <= i <= end and (l.startswith("  /* %") or l.startswith("  /* steps")):
            out.append(f"  {tick}({len(labels)});")
            labels.append(l[5:].split("  ")[0][:90].replace("\\", "").replace('"', ""))
        if entry < i < end and l == "  return 0;" and src[i + 1] == "}":
            out.append(f"  {tick}({len(labels)});{at_end}")
        out.append("#include <stdint.h>" if l.startswith('#include "mg_jit') else l)
    return out, labels
