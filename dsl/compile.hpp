// compile(): turns a graph and its requested outputs into an executable, run by the
// interpreter or (Backend::c99) by the graph emitted as C99, compiled and dlopen-ed.
#pragma once
#include <concepts>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "minigrad/dsl/graph.hpp"
#include "minigrad/ir/array.hpp"
#include "minigrad/runtime/backend.hpp"

namespace mg {

namespace rt { class Executable; }

using Backend = rt::Backend;  // interpreter or c99

// compile()'s options: `compile(g, outs, {.backend = Backend::c99, .check_numerics = true})`.
struct CompileOptions {
  Backend backend = Backend::interpreter;
  // Scan every value for NaN/Inf; the first raises mg::NumericsError naming its root cause
  // (the op, the text-IR line, your line, the operands). Off: no cost at all.
  bool check_numerics = false;
  // Time every node (the interpreter): mg::telemetry(exe) prints the table.
  bool profile = false;
};

// Converts a user's array type to an Array; specialised for xtensor expressions in
// minigrad/xtensor.hpp, open for other array libraries.
template <class E, class Enable = void>
struct ToArray;

// One named input for Executable::run. Arrays bind directly; xtensor expressions bind
// through the constructor in minigrad/xtensor.hpp (included by the umbrella header).
struct Feed {
  std::string name;
  Array value;
  Feed(std::string n, Array v) : name(std::move(n)), value(std::move(v)) {}
  template <class E>
    requires requires(const E& e) { ToArray<E>::convert(e); }
  Feed(std::string n, const E& e) : name(std::move(n)), value(ToArray<E>::convert(e)) {}
};

class Executable {
 public:
  Executable(std::shared_ptr<ir::Graph> graph, std::vector<Tensor> outputs, Backend backend, rt::Checks checks = {});
  Executable(Executable&&) noexcept;
  Executable& operator=(Executable&&) noexcept;
  ~Executable();

  // Runs the graph; results in the order the outputs were requested.
  std::vector<Array> run(std::initializer_list<Feed> feeds) const;
  std::vector<Array> run(const std::vector<Feed>& feeds) const;
  std::vector<Array> run(std::span<const Feed> feeds) const;
  // Feeds from a name -> Array map (std::map, std::unordered_map, rt::Bindings, ...).
  template <class Map>
    requires requires(const Map& m) {
      { m.begin()->first } -> std::convertible_to<std::string>;
      { m.begin()->second } -> std::convertible_to<const Array&>;
    }
  std::vector<Array> run(const Map& feeds) const {
    std::vector<Feed> v;
    v.reserve(feeds.size());
    for (const auto& [name, value] : feeds) v.emplace_back(std::string(name), value);
    return run(std::span<const Feed>(v));
  }

  // Binds an input for every later run (e.g. trained weights); run's feeds override it.
  void bind(std::string name, Array value);
  // Binds an input to a value owned elsewhere and read at every run (a parameter's shared
  // storage: the executable sees later training and keeps the storage alive).
  void bind_live(std::string name, std::shared_ptr<const Array> value);
  std::vector<std::string> input_names() const;  // the graph's inputs, in order

  std::size_t peak_bytes() const;  // intermediate buffer bytes at the worst point
  std::size_t num_steps() const;   // op nodes executed per run
  std::string source_path() const;  // Backend::c99: the generated C source; "" otherwise
  std::string ir_text() const;     // the IR of what runs (outputs' cone only)
  const rt::Executable& runtime() const { return *impl_; }  // the executor (telemetry, memory plan)

 private:
  std::shared_ptr<ir::Graph> graph_;  // keeps the graph alive
  std::vector<Tensor> outputs_;
  std::vector<Feed> bound_;
  std::vector<std::pair<std::string, std::shared_ptr<const Array>>> live_;
  std::unique_ptr<rt::Executable> impl_;
};

Executable compile(const Graph& g, std::vector<Tensor> outputs, Backend backend = Backend::interpreter);
Executable compile(const Graph& g, std::vector<Tensor> outputs, CompileOptions options);

}  // namespace mg
