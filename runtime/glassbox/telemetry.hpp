// Telemetry (the glass box, pillar 1): where a run's time, bytes and FLOPs go, and what
// memory it needs. An executable compiled with Checks::profile times every node it runs
// (the interpreter; the C99 backend runs as one call and is not profiled per node); this
// file turns those times into a table per op or per node, sorted by time (like
// torch.profiler's key_averages()), and a Chrome-trace JSON (chrome://tracing, Perfetto).
// FLOPs come from the registry's `flops` column (matmul and convolutions exact); bytes are
// what a node reads and writes (its operands and result). Memory: the plan's peak and the
// values live at it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "minigrad/ir/graph.hpp"

namespace mg::rt {

struct MemoryPlan;
class Executable;

namespace glassbox {

// What an executable with Checks::profile recorded (Executable::profile()).
struct Profile {
  std::size_t runs = 0;
  std::vector<double> total_us;      // per node id: time summed over runs
  std::vector<std::int64_t> calls;   // per node id: times run
  struct Event {
    ir::NodeId node;
    double start_us, dur_us;  // from the start of the run
  };
  std::vector<Event> last_run;       // the last run, node by node, in order
};

struct NodeCost {
  std::int64_t flops = 0, bytes = 0;
};
// The registry's FLOP count and the bytes read and written by one application of node `id`.
NodeCost node_cost(const ir::Graph& g, ir::NodeId id);

struct TelemetryRow {
  std::string key;     // the op name, or the node ("%5 matmul") for per-node rows
  std::string where;   // per-node rows: the user's file:line and role
  std::int64_t calls = 0;
  double total_us = 0, percent = 0;
  std::int64_t flops = 0, bytes = 0;  // summed over calls
  double gflops_per_s() const { return total_us > 0 ? static_cast<double>(flops) / (total_us * 1e3) : 0; }
  double gbytes_per_s() const { return total_us > 0 ? static_cast<double>(bytes) / (total_us * 1e3) : 0; }
};

// Rows sorted by total time, largest first; per op (by_node false) or per node.
std::vector<TelemetryRow> telemetry_rows(const ir::Graph& g, const Profile& p, bool by_node = false);
// The rows as an aligned text table with a total line; at most `limit` rows (0: all).
std::string format_telemetry(const std::vector<TelemetryRow>& rows, std::size_t limit = 0);
// The last run as Chrome trace events ("ph": "X", microseconds), one per node, with its
// op, role, the user's line, FLOPs and bytes in "args". Loads in chrome://tracing and
// ui.perfetto.dev.
std::string chrome_trace_json(const ir::Graph& g, const Profile& p);

struct MemoryPeak {
  std::size_t peak_bytes = 0;      // MemoryPlan::peak_live_bytes
  ir::NodeId at = ir::kNoNode;     // the step whose result first reaches the peak
  std::vector<ir::NodeId> live;    // the pooled values alive then, largest first
};
MemoryPeak memory_peak(const ir::Graph& g, const MemoryPlan& plan);
std::string format_memory_peak(const ir::Graph& g, const MemoryPeak& m, std::size_t limit = 10);

// The same for an executable: the table of its runs so far (a UserError unless compiled
// with Checks::profile on the interpreter), its last run as a Chrome trace, its memory peak.
std::string telemetry_table(const Executable& exe, bool by_node = false, std::size_t limit = 0);
std::string chrome_trace_json(const Executable& exe);
std::string memory_report(const Executable& exe, std::size_t limit = 10);

}  // namespace glassbox
}  // namespace mg::rt
