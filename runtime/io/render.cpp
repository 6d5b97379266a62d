// Graphviz rendering; see render.hpp. Graphviz keeps global state (its error channel, the
// plugin registry), so calls are serialised. The picture is rendered into memory and
// written here, so a failure never leaves a half-written file from Graphviz.
#include "minigrad/runtime/io/render.hpp"

#if MG_HAVE_GRAPHVIZ
#include <gvc.h>
#endif

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>

#include "minigrad/ir/errors.hpp"

namespace mg::io {

namespace {

[[maybe_unused]] std::mutex g_mutex;
std::string g_messages;  // what Graphviz reported during the current call

int collect_message(char* text) {
  g_messages += text;
  return static_cast<int>(std::strlen(text));
}

void write_file(const std::string& path, const char* data, std::size_t size) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw UserError(path + ": cannot write (" + std::strerror(errno) + ")");
  f.write(data, static_cast<std::streamsize>(size));
  f.close();
  if (!f) throw UserError(path + ": write failed (" + std::strerror(errno) + ")");
}

}  // namespace

void render(const std::string& dot, const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".dot" || ext == ".gv") return write_file(path, dot.data(), dot.size());
  if (ext != ".svg" && ext != ".png")
    throw UserError(path + ": cannot tell the format from extension '" + ext + "' (use .dot, .svg or .png)");
  const std::string format = ext.substr(1);
#if !MG_HAVE_GRAPHVIZ
  throw UserError(path + ": this miniGrad was built without Graphviz (meson -Dgraphviz=enabled); write .dot instead");
#else

  std::lock_guard lock(g_mutex);
  g_messages.clear();
  agusererrf saved = agseterrf(collect_message);
  struct Restore {
    agusererrf f;
    ~Restore() { agseterrf(f); }
  } restore{saved};
  auto fail = [&](const std::string& what) {
    std::string why = g_messages;
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return UserError(path + ": " + what + (why.empty() ? "" : ": " + why));
  };

  // One context per process, never freed: Graphviz 2.42 reads freed memory when a second
  // context is created after the first is freed (the tools suite hit it under ASan).
  static GVC_t* const context = gvContext();
  if (!context) throw fail("Graphviz could not start");
  std::unique_ptr<Agraph_t, int (*)(Agraph_t*)> graph(agmemread(dot.c_str()), agclose);
  if (!graph) throw fail("Graphviz rejected the DOT text");
  if (gvLayout(context, graph.get(), "dot") != 0) throw fail("Graphviz layout failed");
  char* data = nullptr;
  unsigned int size = 0;
  const int rc = gvRenderData(context, graph.get(), format.c_str(), &data, &size);
  gvFreeLayout(context, graph.get());
  std::unique_ptr<char, void (*)(char*)> owned(data, gvFreeRenderData);
  if (rc != 0 || data == nullptr) throw fail("Graphviz could not render " + format);
  write_file(path, data, size);
#endif
}

}  // namespace mg::io
