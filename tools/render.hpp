// Turning DOT text into a file: the only code that talks to Graphviz (libgvc, libcgraph),
// kept out of every widely included header so the rest of miniGrad needs no Graphviz.
// Invariant: errors from Graphviz come back as UserErrors, never as output on stderr.
#pragma once
#include <string>

namespace mg::tools {

// Writes `dot` to `path` in the format the extension names: .dot as is, .svg and .png laid
// out by Graphviz's `dot` engine. An unknown extension, DOT that Graphviz rejects, a
// missing renderer or an unwritable path is a UserError naming the path and the cause.
void render(const std::string& dot, const std::string& path);

}  // namespace mg::tools
