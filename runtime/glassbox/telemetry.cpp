// Telemetry tables, Chrome trace and memory peak; see telemetry.hpp.
#include "minigrad/runtime/glassbox/telemetry.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "minigrad/runtime/memory_plan.hpp"

namespace mg::rt::glassbox {

namespace {

const char* role_name(ir::Role r) {
  switch (r) {
    case ir::Role::forward: return "forward";
    case ir::Role::adjoint: return "grad";
    case ir::Role::second_order: return "grad2";
    case ir::Role::update: return "update";
  }
  return "";
}

std::string where_of(const ir::Node& n) {
  std::string s = role_name(n.role);
  if (n.loc.known()) s = to_string(n.loc) + " " + s;
  return s;
}

std::string human(double v, const char* unit) {
  static const char* prefix[] = {"", "K", "M", "G", "T"};
  int k = 0;
  while (v >= 1000 && k < 4) v /= 1000, ++k;
  char buf[32];
  std::snprintf(buf, sizeof buf, k ? "%.2f %s%s" : "%.0f %s%s", v, prefix[k], unit);
  return buf;
}

}  // namespace

NodeCost node_cost(const ir::Graph& g, ir::NodeId id) {
  const ir::Node& n = g.node(id);
  NodeCost c;
  if (n.kind != ir::NodeKind::op) return c;
  std::vector<Type> in;
  for (ir::NodeId x : n.inputs) {
    in.push_back(g.node(x).type);
    c.bytes += static_cast<std::int64_t>(g.node(x).type.nbytes());
  }
  c.bytes += static_cast<std::int64_t>(n.type.nbytes());
  if (n.op->flops) c.flops = n.op->flops(n, in);
  return c;
}

std::vector<TelemetryRow> telemetry_rows(const ir::Graph& g, const Profile& p, bool by_node) {
  std::map<std::string, TelemetryRow> rows;
  double total = 0;
  for (ir::NodeId id = 0; id < p.calls.size() && id < g.size(); ++id) {
    if (!p.calls[id]) continue;
    const ir::Node& n = g.node(id);
    const std::string key = by_node ? ir::value_name(g, id) + " " + n.op_name() : n.op_name();
    TelemetryRow& r = rows[key];
    r.key = key;
    if (by_node) r.where = where_of(n);
    const NodeCost c = node_cost(g, id);
    r.calls += p.calls[id];
    r.total_us += p.total_us[id];
    r.flops += c.flops * p.calls[id];
    r.bytes += c.bytes * p.calls[id];
    total += p.total_us[id];
  }
  std::vector<TelemetryRow> out;
  for (auto& [k, r] : rows) {
    r.percent = total > 0 ? 100 * r.total_us / total : 0;
    out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.total_us > b.total_us; });
  return out;
}

std::string format_telemetry(const std::vector<TelemetryRow>& rows, std::size_t limit) {
  std::size_t wkey = 4;
  const std::size_t shown = limit ? std::min(limit, rows.size()) : rows.size();
  for (std::size_t i = 0; i < shown; ++i) wkey = std::max(wkey, rows[i].key.size());
  std::string s;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-*s %7s %11s %7s %11s %10s %12s %10s  %s\n", static_cast<int>(wkey), "name",
                "calls", "total ms", "%", "mean us", "GFLOP/s", "FLOPs", "GB/s", "where");
  s += buf;
  TelemetryRow sum;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const TelemetryRow& r = rows[i];
    sum.calls += r.calls, sum.total_us += r.total_us, sum.flops += r.flops, sum.bytes += r.bytes;
    if (i >= shown) continue;
    std::snprintf(buf, sizeof buf, "%-*s %7lld %11.3f %6.1f%% %11.2f %10.2f %12s %10.2f  %s\n", static_cast<int>(wkey),
                  r.key.c_str(), static_cast<long long>(r.calls), r.total_us / 1e3, r.percent,
                  r.calls ? r.total_us / static_cast<double>(r.calls) : 0.0, r.gflops_per_s(),
                  human(static_cast<double>(r.flops), "").c_str(), r.gbytes_per_s(), r.where.c_str());
    s += buf;
  }
  if (shown < rows.size()) s += "... " + std::to_string(rows.size() - shown) + " more rows\n";
  std::snprintf(buf, sizeof buf, "%-*s %7lld %11.3f %6.1f%% %11s %10.2f %12s %10.2f\n", static_cast<int>(wkey), "total",
                static_cast<long long>(sum.calls), sum.total_us / 1e3, 100.0, "", sum.gflops_per_s(),
                human(static_cast<double>(sum.flops), "").c_str(), sum.gbytes_per_s());
  s += buf;
  return s;
}

std::string chrome_trace_json(const ir::Graph& g, const Profile& p) {
  nlohmann::json events = nlohmann::json::array();
  for (const Profile::Event& e : p.last_run) {
    const ir::Node& n = g.node(e.node);
    const NodeCost c = node_cost(g, e.node);
    nlohmann::json args = {{"node", ir::value_name(g, e.node)}, {"type", to_string(n.type)}, {"flops", c.flops},
                           {"bytes", c.bytes}};
    if (n.loc.known()) args["loc"] = to_string(n.loc);
    events.push_back({{"name", n.op_name()}, {"cat", role_name(n.role)}, {"ph", "X"}, {"ts", e.start_us},
                      {"dur", e.dur_us}, {"pid", 0}, {"tid", 0}, {"args", args}});
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(1);
}

MemoryPeak memory_peak(const ir::Graph& g, const MemoryPlan& plan) {
  MemoryPeak m;
  m.peak_bytes = plan.peak_live_bytes;
  // Replays the plan: a result is placed before the values its step frees are released.
  std::vector<ir::NodeId> live;
  std::size_t bytes = 0;
  for (std::size_t s = 0; s < plan.steps.size() && m.at == ir::kNoNode; ++s) {
    const ir::NodeId id = plan.steps[s];
    if (plan.slot_of[id] != MemoryPlan::kNoSlot) {
      live.push_back(id);
      bytes += g.node(id).type.nbytes();
      if (bytes == plan.peak_live_bytes && bytes > 0) {
        m.at = id;
        m.live = live;
        break;
      }
    }
    for (ir::NodeId dead : plan.release_after[s]) {
      live.erase(std::remove(live.begin(), live.end(), dead), live.end());
      bytes -= g.node(dead).type.nbytes();
    }
  }
  std::stable_sort(m.live.begin(), m.live.end(),
                   [&](ir::NodeId a, ir::NodeId b) { return g.node(a).type.nbytes() > g.node(b).type.nbytes(); });
  return m;
}

std::string format_memory_peak(const ir::Graph& g, const MemoryPeak& m, std::size_t limit) {
  std::string s = "memory plan peak: " + std::to_string(m.peak_bytes) + " bytes (" +
                  human(static_cast<double>(m.peak_bytes), "B") + ") of intermediates";
  if (m.at == ir::kNoNode) return s + "\n";
  s += ", reached at " + ir::value_name(g, m.at) + " " + g.node(m.at).op_name() + "; live then (" +
       std::to_string(m.live.size()) + " values):\n";
  for (std::size_t i = 0; i < m.live.size() && (!limit || i < limit); ++i) {
    const ir::Node& n = g.node(m.live[i]);
    s += "  " + ir::value_name(g, n.id) + " " + n.op_name() + " " + to_string(n.type) + "  " +
         std::to_string(n.type.nbytes()) + " bytes  " + where_of(n) + "\n";
  }
  if (limit && m.live.size() > limit) s += "  ... " + std::to_string(m.live.size() - limit) + " more\n";
  return s;
}

namespace {
const Profile& profile_of(const Executable& exe) {
  if (!exe.profile())
    throw UserError("telemetry: the executable was not compiled with profiling (Checks::profile, "
                    "CompileOptions::profile or TrainOptions::profile, on the interpreter)");
  return *exe.profile();
}
}  // namespace

std::string telemetry_table(const Executable& exe, bool by_node, std::size_t limit) {
  return format_telemetry(telemetry_rows(exe.graph(), profile_of(exe), by_node), limit);
}
std::string chrome_trace_json(const Executable& exe) { return chrome_trace_json(exe.graph(), profile_of(exe)); }
std::string memory_report(const Executable& exe, std::size_t limit) {
  return format_memory_peak(exe.graph(), memory_peak(exe.graph(), exe.memory_plan()), limit);
}

}  // namespace mg::rt::glassbox
