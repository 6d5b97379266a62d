#!/usr/bin/env python3
"""Compiles a file that must fail to compile and checks the diagnostic is short and clear:
exactly one error, containing the expected text, in under MAX_BYTES of compiler output.
Usage: expect_compile_error.py CXX INCLUDE_DIR FILE EXPECTED_TEXT"""
import subprocess
import sys

MAX_BYTES = 3000  # the diagnostic was 7.7 KB of Hana instantiations before the check

cxx, include, source, expected = sys.argv[1:5]
r = subprocess.run([cxx, '-std=c++20', '-fsyntax-only', '-fdiagnostics-color=never', '-I' + include, source],
                   capture_output=True, text=True)
out = r.stderr
errors = [l for l in out.splitlines() if ' error: ' in l]
problems = []
if r.returncode == 0:
    problems.append('it compiled')
if len(errors) != 1:
    problems.append(f'{len(errors)} errors, expected exactly 1')
if expected not in out:
    problems.append(f'the message lacks {expected!r}')
if len(out) > MAX_BYTES:
    problems.append(f'{len(out)} bytes of diagnostics (limit {MAX_BYTES})')
if problems:
    print(out)
    print('FAIL: ' + '; '.join(problems))
    sys.exit(1)
print(f'PASS: one error, {len(out)} bytes: {errors[0].strip()[:160]}')
