#!/usr/bin/python3
"""The `minigrad` tool end to end: runs the built binary on the .mgir files in data/ and
compares its .npy outputs with values NumPy computes independently (forward values and
hand-derived gradients). Also: every dtype and 0-d values, .npy variants (Fortran order,
big-endian, a 128+ byte header), input errors (exit 1), bad usage (exit 2), --help (exit 0),
`grad` output that parses back, `dot` text/SVG/PNG, `ops`.

usage: test_cli.py PATH/TO/minigrad     (fails when NumPy is missing)
"""
import os
import re
import sys

try:
    import numpy as np
except ImportError:  # the library never needs Python; only this test does
    print("NumPy is not installed for", sys.executable, "- run scripts/setup.sh (python3-numpy)")
    sys.exit(1)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cli_test import CliTestCase, main  # noqa: E402
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def data(name):
    return os.path.join(DATA, name)


def read(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


class CliTest(CliTestCase):
    tmp_prefix = "mg_cli_"

    def setUp(self):
        super().setUp()
        self.rng = np.random.default_rng(1234)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def save(self, name, array):
        p = self.path(name)
        np.save(p, array)
        return p

    def run_graph(self, mgir, inputs, *extra, expect=0):
        args = ["run", mgir, "--out", self.path("out")]
        for name, array in inputs.items():
            args += ["--input", f"{name}={self.save(name + '.npy', array)}"]
        return self.minigrad(*args, *extra, expect=expect)

    def output(self, name):
        return np.load(os.path.join(self.path("out"), name + ".npy"))

    def assert_array(self, got, want, rtol=1e-12, atol=1e-12):
        want = np.asarray(want)
        self.assertEqual(got.dtype, want.dtype)
        self.assertEqual(got.shape, want.shape)
        if got.dtype.kind in "biu":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)

    # ---- run: values -------------------------------------------------------------------

    def mlp_inputs(self):
        return {"x": self.rng.standard_normal((2, 3)), "w": self.rng.standard_normal((3, 4)),
                "b": self.rng.standard_normal(4)}

    def test_run_forward_f64(self):
        i = self.mlp_inputs()
        r = self.run_graph(data("mlp_loss.mgir"), i)
        self.assertIn("loss.npy", r.stdout)
        h = np.tanh(i["x"] @ i["w"] + i["b"])
        self.assert_array(self.output("loss"), np.float64(0.5 * h.sum()))
        self.assertEqual(sorted(os.listdir(self.path("out"))), ["loss.npy"])

    def test_run_grad_matches_hand_derivation(self):
        i = self.mlp_inputs()
        self.run_graph(data("mlp_loss.mgir"), i, "--grad")
        h = np.tanh(i["x"] @ i["w"] + i["b"])
        dz = 0.5 * (1 - h * h)  # d loss / d (x@w + b)
        self.assert_array(self.output("grad_x"), dz @ i["w"].T)
        self.assert_array(self.output("grad_w"), i["x"].T @ dz)
        self.assert_array(self.output("grad_b"), dz.sum(axis=0))
        self.assert_array(self.output("loss"), np.float64(0.5 * h.sum()))

    def test_run_grad_f32_zero_d_and_integer_inputs(self):
        i = {"x": np.float32(1.5), "v": np.array([0.25, -2.0], np.float32), "k": np.array([3, -1])}
        self.run_graph(data("mixed_loss.mgir"), i, "--grad")
        s = np.float32((i["v"] * i["k"]).sum())
        self.assert_array(self.output("loss"), np.float32(i["x"] ** 2 * s), rtol=1e-6)
        self.assert_array(self.output("grad_x"), np.float32(2 * i["x"] * s), rtol=1e-6)
        self.assert_array(self.output("grad_v"), (i["x"] ** 2 * i["k"]).astype(np.float32), rtol=1e-6)
        self.assertFalse(os.path.exists(os.path.join(self.path("out"), "grad_k.npy")))

    def test_run_cotangent(self):
        i = {"x": self.rng.standard_normal(3), "w": self.rng.standard_normal(3)}
        c = self.rng.standard_normal(3)
        self.run_graph(data("vector_out.mgir"), i, "--cotangent", self.save("c.npy", c))
        self.assert_array(self.output("y"), np.sin(i["x"]) * i["w"])
        self.assert_array(self.output("grad_x"), c * np.cos(i["x"]) * i["w"])
        self.assert_array(self.output("grad_w"), c * np.sin(i["x"]))

    def test_run_every_dtype_and_zero_d(self):
        a = np.array([0.5, -1.0, 2.0], np.float32)
        n = np.array([[1, -2], [3, 4]], np.int64)
        m = np.array([[True, False], [False, True]])
        s = np.float64(-1.5)
        self.run_graph(data("dtypes.mgir"), {"a": a, "n": n, "m": m, "s": s})
        mi = m.astype(np.int64)
        self.assert_array(self.output("exp_a"), np.exp(a), rtol=1e-6)
        self.assert_array(self.output("max_a"), np.float32(a.max()))
        self.assert_array(self.output("twice_n"), n + n)
        self.assert_array(self.output("select"), np.where(m, n, mi))
        self.assert_array(self.output("not_m"), ~m)
        self.assert_array(self.output("n_gt_m"), n > mi)
        self.assert_array(self.output("s_squared"), np.float64(s * s))
        self.assert_array(self.output("argmax_a"), np.int64(a.argmax()))
        self.assert_array(self.output("s_negative"), np.bool_(s < 0))
        self.assert_array(self.output("sum_n"), np.int64(n.sum()))
        for name in ["max_a", "s_squared", "argmax_a", "s_negative", "sum_n"]:
            self.assertEqual(self.output(name).shape, ())

    def test_run_reads_npy_variants(self):
        """Fortran order, big-endian, and a 128+ byte header (xnpy's reader fails on it)."""
        i = {"x": np.asfortranarray(self.rng.standard_normal((2, 3))),
             "w": self.rng.standard_normal((3, 4)).astype(">f8"),
             "b": self.rng.standard_normal(4)}
        self.run_graph(data("mlp_loss.mgir"), i)
        h = np.tanh(i["x"] @ i["w"].astype("<f8") + i["b"])
        self.assert_array(self.output("loss"), np.float64(0.5 * h.sum()))

        rank = 24
        dims = ",".join(["1"] * (rank - 1) + ["2"])
        mgir = self.path("high_rank.mgir")
        with open(mgir, "w") as f:
            f.write(f"graph(%x: f64[{dims}]) {{\n  %1 = exp(%x) : f64[{dims}]\n  return e = %1\n}}\n")
        x = self.rng.standard_normal((1,) * (rank - 1) + (2,))
        with open(self.save("hx.npy", x), "rb") as f:
            self.assertGreaterEqual(f.read(10)[8], 128)  # the header length byte xnpy misreads
        self.minigrad("run", mgir, "--input", "x=" + self.path("hx.npy"), "--out", self.path("out"))
        self.assert_array(self.output("e"), np.exp(x))

    def test_run_empty_arrays(self):
        mgir = self.path("empty.mgir")
        with open(mgir, "w") as f:
            f.write("graph(%x: f32[0,3]) {\n  %1 = neg(%x) : f32[0,3]\n"
                    "  %2 = reduce_sum(%x) {axes = [0], keepdim = false} : f32[3]\n"
                    "  return n = %1, s = %2\n}\n")
        self.minigrad("run", mgir, "-i", "x=" + self.save("x.npy", np.zeros((0, 3), np.float32)),
                      "-o", self.path("out"))
        self.assert_array(self.output("n"), np.zeros((0, 3), np.float32))
        self.assert_array(self.output("s"), np.zeros(3, np.float32))

    # ---- run: errors (exit 1) and usage (exit 2) ---------------------------------------

    def run_error(self, inputs, *needles, mgir="mlp_loss.mgir", extra=()):
        r = self.run_graph(data(mgir), inputs, *extra, expect=1)
        for needle in needles:
            self.assertIn(needle, r.stderr)
        return r

    def test_run_input_errors(self):
        good = self.mlp_inputs()
        self.run_error({**good, "x": good["x"].astype(np.float32)},
                       "input 'x': dtype mismatch", "f32[2,3]", "graph expects f64[2,3]")
        self.run_error({**good, "b": np.zeros(5)}, "input 'b': shape mismatch", "f64[5]", "f64[4]")
        self.run_error({**good, "b": np.zeros(4, np.int32)}, "dtype '<i4' is not supported")
        self.run_error({"x": good["x"], "w": good["w"]}, "graph input 'b' (f64[4]) is not bound")
        self.run_error({**good, "z": good["b"]}, "the graph has no input 'z'", "x, w, b")
        with open(self.path("junk.npy"), "wb") as f:
            f.write(b"not a numpy file")
        r = self.minigrad("run", data("mlp_loss.mgir"), "-i", "x=" + self.path("junk.npy"), "-o",
                          self.path("out"), expect=1)
        self.assertIn("not a valid .npy file", r.stderr)
        self.minigrad("run", data("mlp_loss.mgir"), "-i", "x=" + self.path("nope.npy"), "-o",
                      self.path("out"), expect=1)

    def test_run_refuses_graphs_larger_than_memory(self):
        # f32[100000,100000,100000] passes `check`; `run` must refuse before allocating.
        huge = self.path("huge.mgir")
        with open(huge, "w") as f:
            f.write("graph(%x: f32[]) {\n  %1 = broadcast_to(%x) {shape = [100000, 100000, 100000]} : "
                    "f32[100000,100000,100000]\n  %2 = reduce_sum(%1) {axes = [0, 1, 2], keepdim = false} : f32[]\n"
                    "  return s = %2\n}\n")
        self.minigrad("check", huge)
        x = self.save("x0.npy", np.float32(1.0))
        r = self.minigrad("run", huge, "-i", "x=" + x, "-o", self.path("out_huge"), expect=1)
        self.assertIn("needs", r.stderr)
        self.assertIn("3.6 PiB", r.stderr)
        self.assertIn("--max-memory", r.stderr)
        # An explicit limit: the small graph fits in 1M, not in 1 byte.
        good = self.mlp_inputs()
        args = ["run", data("mlp_loss.mgir")]
        for name, a in good.items():
            args += ["-i", f"{name}={self.save(name + '.npy', a)}"]
        self.minigrad(*args, "-o", self.path("out_ok"), "--max-memory", "1M")
        r = self.minigrad(*args, "-o", self.path("out_tiny"), "--max-memory", "1", expect=1)
        self.assertIn("over the limit of 1 bytes", r.stderr)
        self.minigrad(*args, "-o", self.path("out_bad"), "--max-memory", "lots", expect=2)
        # An output directory that cannot be made fails before anything runs.
        blocker = self.path("file_not_dir")
        open(blocker, "w").close()
        r = self.minigrad("run", huge, "-i", "x=" + x, "-o", os.path.join(blocker, "sub"), expect=1)
        self.assertIn("cannot create the output directory", r.stderr)

    def test_emit_c_refuses_memory_beyond_its_limit(self):
        big = self.path("big.mgir")
        with open(big, "w") as f:
            f.write("graph(%x: f32[]) {\n  %1 = broadcast_to(%x) {shape = [1073741824, 2]} : f32[1073741824,2]\n"
                    "  %2 = reduce_sum(%1) {axes = [0, 1], keepdim = false} : f32[]\n  return s = %2\n}\n")
        out = self.path("c_out")
        r = self.minigrad("emit-c", big, "-o", out, "--target-bits", "32", expect=1)
        self.assertIn("over the limit of 4294967295 bytes", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "big.c")))
        r = self.minigrad("emit-c", big, "-o", out, "--max-memory", "1K", expect=1)
        self.assertIn("nothing was written", r.stderr)

    def test_run_grad_errors(self):
        self.run_error({"x": np.zeros(2)}, "exactly one output; it has 2", mgir="two_outputs.mgir",
                       extra=["--grad"])
        i = {"x": np.zeros(3), "w": np.zeros(3)}
        self.run_error(i, "not a scalar", "--cotangent", mgir="vector_out.mgir", extra=["--grad"])
        self.run_error(i, "cotangent f64[4]", "does not match output 'y'", mgir="vector_out.mgir",
                       extra=["--cotangent", self.save("c.npy", np.zeros(4))])

    def test_bad_files(self):
        r = self.minigrad("check", self.path("missing.mgir"), expect=1)
        self.assertIn("missing.mgir", r.stderr)
        bad = self.path("bad.mgir")
        with open(bad, "w") as f:
            f.write("graph(%x: f64[2]) {\n  %1 = exp(%x) : f64[3]\n  return %1\n}\n")
        r = self.minigrad("check", bad, expect=1)
        self.assertIn("bad.mgir:2:", r.stderr)
        self.assertIn("^", r.stderr)
        with open(bad, "w") as f:
            f.write("graph(%x: f64[2]) {\n  %1 = nosuchop(%x) : f64[2]\n  return %1\n}\n")
        r = self.minigrad("run", bad, "-i", "x=" + self.save("x.npy", np.zeros(2)), "-o", self.path("o"),
                          expect=1)
        self.assertIn("bad.mgir:2:", r.stderr)

    def test_bad_usage_exits_2(self):
        mlp = data("mlp_loss.mgir")
        for args in [[], ["frobnicate"], ["check"], ["check", mlp, "extra"], ["check", "--bogus", mlp],
                     ["run", mlp], ["run", mlp, "--out"], ["run", mlp, "-o", self.tmp, "--input", "x"],
                     ["run", mlp, "-o", self.tmp, "--input", "=a.npy"], ["grad"], ["dot", mlp, "-o", "x.pdf"],
                     ["run", mlp, "-o", self.tmp, "--co", "c.npy"], ["help", "frobnicate"]]:
            r = self.minigrad(*args, expect=2)
            self.assertTrue(r.stderr.strip(), args)

    def test_help_exits_0(self):
        top = self.minigrad("--help").stdout
        self.assertIn("usage: minigrad <command>", top)
        for cmd in ["check", "run", "grad", "dot", "ops"]:
            self.assertIn("\n  " + cmd + " ", top)
            for args in [[cmd, "--help"], [cmd, "-h"], ["help", cmd]]:
                r = self.minigrad(*args)
                self.assertIn("usage: minigrad " + cmd, r.stdout)
                self.assertIn("--help", r.stdout)

    # ---- check, grad, dot, ops --------------------------------------------------------

    def test_check_lists_values(self):
        r = self.minigrad("check", data("mlp_loss.mgir"))
        lines = r.stdout.splitlines()
        for name, typ, op in [("%x", "f64[2,3]", "input"), ("%b", "f64[4]", "input"),
                              ("%3", "f64[2,4]", "matmul"), ("%7", "f64[2,4]", "constant"),
                              ("%9", "f64[]", "reduce_sum")]:
            self.assertTrue(any(l.split() == [name, typ, op] for l in lines), (name, r.stdout))
        self.assertIn("outputs:\n  loss = %9 : f64[]\n", r.stdout)
        self.assertIn("ok (10 values, 1 output)", r.stdout)

    def test_grad_output_parses_back_and_runs(self):
        out = self.path("g.mgir")
        self.minigrad("grad", data("mlp_loss.mgir"), "-o", out)
        text = read(out)
        self.assertIn(" grad", text)
        ret = [l for l in text.splitlines() if l.strip().startswith("return")][0]
        for name in ["loss =", "grad_x =", "grad_w =", "grad_b ="]:
            self.assertIn(name, ret)
        self.minigrad("check", out)
        printed = self.minigrad("grad", data("mlp_loss.mgir")).stdout
        self.assertEqual(printed, text)
        # The printed gradient graph computes what --grad computes.
        i = self.mlp_inputs()
        self.run_graph(out, i)
        h = np.tanh(i["x"] @ i["w"] + i["b"])
        self.assert_array(self.output("grad_w"), i["x"].T @ (0.5 * (1 - h * h)))
        self.minigrad("grad", data("vector_out.mgir"), expect=1)

    def test_dot_text_svg_png(self):
        r = self.minigrad("dot", data("mlp_loss.mgir"))
        self.assertTrue(r.stdout.startswith("digraph minigrad {"))
        self.assertNotIn("cluster_backward", r.stdout)
        nodes = [l for l in r.stdout.splitlines() if re.match(r"\s*n\d+ \[label=", l)]
        self.assertEqual(len(nodes), 10)  # x, w, b and 7 values
        self.assertEqual(r.stdout.count(" -> "), 9)  # one edge per operand
        g = self.minigrad("dot", data("mlp_loss.mgir"), "--grad").stdout
        self.assertIn('subgraph "cluster_backward"', g)
        self.assertIn("-> grad_w", g)
        svg = self.path("g.svg")
        self.minigrad("dot", data("mlp_loss.mgir"), "--grad", "-o", svg)
        text = read(svg)
        self.assertTrue(text.startswith("<?xml") or text.startswith("<svg"))
        for label in [">matmul<", ">tanh<", ">f64[2,4]<", "cluster_backward", "&#45;&gt; grad_x"]:
            self.assertIn(label, text)
        png = self.path("g.png")
        self.minigrad("dot", data("mlp_loss.mgir"), "-o", png)
        self.assertEqual(read(png, "rb")[:8], b"\x89PNG\r\n\x1a\n")
        self.minigrad("dot", data("mlp_loss.mgir"), "-o", self.path("g.dot"))
        self.assertEqual(read(self.path("g.dot")), r.stdout)
        self.minigrad("dot", data("mlp_loss.mgir"), "-o", os.path.join(self.tmp, "no", "dir", "g.svg"), expect=1)

    def test_dot_modules_and_collapse(self):
        src = self.path("two_layers.mgir")
        with open(src, "w") as f:
            f.write("graph(%x: f64[2,3], %fc1.weight: f64[3,4], %fc2.weight: f64[4,1]) {\n"
                    "  %3 = matmul(%x, %fc1.weight) : f64[2,4]\n"
                    "  %4 = tanh(%3) : f64[2,4]\n"
                    "  %5 = matmul(%4, %fc2.weight) : f64[2,1]\n"
                    "  %6 = reduce_sum(%5) {axes = [0, 1], keepdim = false} : f64[]\n"
                    "  return loss = %6\n}\n")
        g = self.minigrad("dot", src, "--grad").stdout
        for cluster in ["cluster_forward", "cluster_backward", "cluster_forward_fc1", "cluster_forward_fc2",
                        "cluster_backward_fc1", "cluster_backward_fc2"]:
            self.assertIn('subgraph "%s" {' % cluster, g)
        flat = self.minigrad("dot", src, "--grad", "--no-modules").stdout
        self.assertNotIn("cluster_forward_fc1", flat)
        c = self.minigrad("dot", src, "--grad", "--collapse").stdout
        boxes = re.findall(r'(c\d+) \[label="([^"\\]*)\\n(\d+) nodes', c)
        self.assertEqual([b[1] for b in boxes], ["(no module)", "fc1", "fc2", "(no module)", "fc2", "fc1"], c)
        self.assertFalse(re.search(r"^\s*n\d+ \[label=", c, re.M), c)
        self.assertEqual(sum(int(b[2]) for b in boxes), len(re.findall(r"^\s*n\d+ \[label=", g, re.M)))
        self.assertIn("c1 -> c2", c)  # forward fc1 -> forward fc2
        svg = self.path("c.svg")
        self.minigrad("dot", src, "--grad", "--collapse", "-o", svg)
        self.assertIn("fc2", read(svg))

    def test_ops(self):
        r = self.minigrad("ops")
        for op in ["add", "matmul", "reduce_sum", "broadcast_to", "where"]:
            self.assertTrue(any(l.startswith(op + "  arity") for l in r.stdout.splitlines()), op)
        self.assertIn("{axes: i64 list, keepdim: bool = false}", r.stdout)
        one = self.minigrad("ops", "gt").stdout.splitlines()
        self.assertEqual(len(one), 2)
        self.assertTrue(one[0].startswith("gt  arity 2"))
        self.assertIn("vjp: no", one[0])
        self.minigrad("ops", "nosuchop", expect=1)


if __name__ == "__main__":
    main(__doc__)
