#!/usr/bin/env python3
"""Prints the headers (.hpp, .h) under the folders given, relative to the repository root,
one per line, sorted: meson installs them under include/minigrad/ (see meson.build)."""
import os
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = []
for top in sys.argv[1:]:
    for d, _, files in os.walk(os.path.join(root, top)):
        out += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(('.hpp', '.h'))]
print('\n'.join(sorted(out)))
