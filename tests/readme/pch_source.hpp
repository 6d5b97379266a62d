// What the README blocks' precompiled header holds: the header most blocks include first
// (tests/readme/pch/minigrad/meson.build builds it; check_snippets.py --pch uses it).
#include <minigrad/minigrad.hpp>
