#!/usr/bin/env python3
"""Runs a program that must fail cleanly: exit status EXPECTED (not a signal: std::terminate
was SIGABRT) and stderr containing TEXT. Usage: check_exit_code.py EXPECTED TEXT PROGRAM [ARGS...]"""
import subprocess
import sys

expected, text, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
if r.returncode != expected or text not in r.stderr:
    print(f"FAIL: {' '.join(cmd)} exited {r.returncode} (want {expected}); stderr:\n{r.stderr}")
    sys.exit(1)
print(f"PASS: exit {r.returncode}: {r.stderr.strip()[:200]}")
