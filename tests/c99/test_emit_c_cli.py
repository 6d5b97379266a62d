#!/usr/bin/python3
"""`minigrad emit-c FILE.mgir -o DIR` end to end: the exported .c/.h pair compiles with
`cc -std=c99 -pedantic -Wall -Wextra -Werror` (and clang when installed), a tiny C driver
prints the same values as `minigrad run` on the same inputs (with and without --weights
embedding), and a malformed or missing file is a clear error with exit 1, a missing -o a
usage error with exit 2.

usage: test_emit_c_cli.py PATH/TO/minigrad
"""
import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cli_test import CliTestCase, main  # noqa: E402

# A Linear layer as the DSL builds it (the weight is transposed by permute, the bias
# broadcast), then tanh, and a row sum: two outputs, f32. Batch 9: the packed GEMM (read
# transposed in place), not only the few-rows loops, must compile -pedantic -Werror.
M = 9
GRAPH = f"""// emit-c test graph
graph(%x: f32[{M},3], %w: f32[4,3], %b: f32[4]) {{
  %3 = permute(%w) {{perm = [1, 0]}} : f32[3,4]
  %4 = matmul(%x, %3) : f32[{M},4]
  %5 = broadcast_to(%b) {{shape = [{M}, 4]}} : f32[{M},4]
  %6 = add(%4, %5) : f32[{M},4]
  %7 = tanh(%6) : f32[{M},4]
  %8 = reduce_sum(%7) {{axes = [1], keepdim = false}} : f32[{M}]
  return y = %7, s = %8
}}
"""


def c_floats(a):
    # %.9g round-trips every f32 exactly.
    return ", ".join("%.9gf" % v for v in a.astype(np.float32).ravel())


def save_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        data = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


class EmitCCliTest(CliTestCase):
    tmp_prefix = "mg_emit_c_"

    def setUp(self):
        super().setUp()
        self.mgir = os.path.join(self.tmp, "layer.mgir")
        with open(self.mgir, "w") as f:
            f.write(GRAPH)
        rng = np.random.default_rng(11)
        self.inputs = {"x": rng.standard_normal((M, 3)).astype(np.float32),
                       "w": rng.standard_normal((4, 3)).astype(np.float32),
                       "b": rng.standard_normal(4).astype(np.float32)}

    def interpreter(self):
        args = ["run", self.mgir, "--out", os.path.join(self.tmp, "want")]
        for name, a in self.inputs.items():
            p = os.path.join(self.tmp, name + ".npy")
            np.save(p, a)
            args += ["--input", f"{name}={p}"]
        self.minigrad(*args)
        return [np.load(os.path.join(self.tmp, "want", f + ".npy")) for f in ("y", "s")]

    def compile_and_run(self, out_dir, name, args):
        """Writes a driver calling NAME_run(in_<arg>..., y, s), compiles it with the exported
        source under each available compiler, and returns the printed y and s per compiler."""
        decls = "".join(f"  static const float in_{a}[] = {{{c_floats(self.inputs[a])}}};\n" for a in args)
        call = ", ".join(["in_" + a for a in args] + ["y", "s"])
        driver = os.path.join(out_dir, "driver.c")
        with open(driver, "w") as f:
            f.write(f'#include <stdio.h>\n#include "{name}.h"\nint main(void) {{\n{decls}'
                    f"  float y[{4 * M}], s[{M}];\n  int i, rc = {name}_run({call});\n"
                    f'  for (i = 0; i < {4 * M}; ++i) printf("%.9g\\n", y[i]);\n'
                    f'  for (i = 0; i < {M}; ++i) printf("%.9g\\n", s[i]);\n  return rc;\n}}\n')
        results = {}
        for cc in ["cc", "clang"]:
            if shutil.which(cc) is None:
                self.assertNotEqual(cc, "cc", "no C compiler")
                continue
            exe = os.path.join(out_dir, "run_" + cc)
            objects = []
            for unit in (name, "driver"):
                objects.append(os.path.join(out_dir, f"{unit}_{cc}.o"))
                r = self.compile_c(out_dir, cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2", "-c",
                                   unit + ".c", "-o", objects[-1])
                self.assertEqual(r.returncode, 0, f"{cc} {unit}.c:\n{r.stderr}")
            r = subprocess.run([cc, *objects, "-o", exe, "-lm"], capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, f"{cc}:\n{r.stderr}")
            r = subprocess.run([exe], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            vals = np.array([float(v) for v in r.stdout.split()], dtype=np.float32)
            results[cc] = (vals[:4 * M].reshape(M, 4), vals[4 * M:])
        return results

    def check(self, results, want):
        for cc, got in results.items():
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=cc)

    def test_export_compiles_pedantic_and_matches_the_interpreter(self):
        out = os.path.join(self.tmp, "out")
        r = self.minigrad("emit-c", self.mgir, "-o", out)
        self.assertIn("arena:", r.stdout)
        with open(os.path.join(out, "layer.c")) as f:
            src = f.read()
        self.assertNotIn("malloc", src)
        self.assertIn("mg_gemm_f32(", src)  # the packed GEMM
        self.assertNotIn("= permute(", src)  # the transpose is read in place, not copied
        for line in src.splitlines():
            if line.startswith("#include"):
                # immintrin.h: the compiler's own, only under __AVX512F__/__AVX2__ (the GEMM's FMAs)
                self.assertIn(line, ["#include <math.h>", "#include <stdint.h>", '#include "layer.h"',
                                     "#include <immintrin.h>"])
        self.check(self.compile_and_run(out, "layer", ["x", "w", "b"]), self.interpreter())

    def test_embedded_weights_leave_only_the_data_input(self):
        st = os.path.join(self.tmp, "weights.safetensors")
        save_safetensors(st, {"w": self.inputs["w"], "b": self.inputs["b"]})
        out = os.path.join(self.tmp, "out_w")
        r = self.minigrad("emit-c", self.mgir, "-o", out, "--name", "net", "--weights", st)
        self.assertRegex(r.stdout, r"weights: [1-9][0-9]* bytes embedded")
        self.check(self.compile_and_run(out, "net", ["x"]), self.interpreter())

    def test_zero_element_values_compile_warning_free(self):
        # Values without elements get no loop; their pointers must not trip -Wunused-variable.
        zero = os.path.join(self.tmp, "zero.mgir")
        with open(zero, "w") as f:
            f.write("graph(%x: f64[0,3], %y: f64[2]) {\n  %2 = exp(%x) : f64[0,3]\n"
                    "  %3 = neg(%y) : f64[2]\n  return a = %2, b = %3\n}\n")
        out = os.path.join(self.tmp, "out_zero")
        self.minigrad("emit-c", zero, "-o", out)
        for cc in ["cc", "clang"]:
            if shutil.which(cc) is None:
                continue
            r = self.compile_c(out, cc, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-c", "zero.c",
                               "-o", "zero_" + cc + ".o")
            self.assertEqual(r.returncode, 0, f"{cc}:\n{r.stderr}")

    def test_bad_files_are_clear_errors(self):
        bad = os.path.join(self.tmp, "bad.mgir")
        with open(bad, "w") as f:
            f.write("graph(%x: f32[2]) {\n  %1 = exp(%x : f32[2]\n  return y = %1\n}\n")
        out = os.path.join(self.tmp, "never")
        r = self.minigrad("emit-c", bad, "-o", out, expect=1)
        self.assertRegex(r.stderr, r"bad\.mgir:2:\d+", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "bad.c")))
        r = self.minigrad("emit-c", os.path.join(self.tmp, "missing.mgir"), "-o", out, expect=1)
        self.assertIn("missing.mgir", r.stderr)
        r = self.minigrad("emit-c", self.mgir, expect=2)
        self.assertIn("-o", r.stderr)


if __name__ == "__main__":
    main(__doc__)
