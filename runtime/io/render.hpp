// Turning DOT text into a file: the only code that talks to Graphviz (libgvc, libcgraph),
// kept out of every widely included header. Built without Graphviz (-Dgraphviz=disabled),
// .dot still works and .svg/.png are a UserError saying so.
// Invariant: errors from Graphviz come back as UserErrors, never as output on stderr.
#pragma once
#include <string>

namespace mg::io {

// Writes `dot` to `path` in the format the extension names: .dot as is, .svg and .png laid
// out by Graphviz's `dot` engine. An unknown extension, DOT that Graphviz rejects, a
// missing renderer or an unwritable path is a UserError naming the path and the cause.
void render(const std::string& dot, const std::string& path);

}  // namespace mg::tools
