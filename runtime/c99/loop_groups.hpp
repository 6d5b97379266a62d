// Loop groups for the C99 emitter: consecutive flat elementwise steps of one length (an
// optimizer's moment, second moment and update over the same parameter) run chunk by
// chunk inside ONE loop, so each chunk's values are still in L1 when the next step reads
// them, and one parallel region serves them all. Element i of a step in a group reads
// only element i of values of the group's length (or other values whole), so running a
// chunk of every step before the next chunk gives the same values in the same order.
#pragma once
#include <cstddef>
#include <vector>

#include "minigrad/ir/graph.hpp"
#include "minigrad/runtime/c99/schedule.hpp"

namespace mg::rt::c99 {

// Elements per chunk: seven f32 streams (an Adam update's reads and writes) fit in L1.
inline constexpr std::int64_t kGroupChunk = 1024;

// Per step k: the end (exclusive) of the group of steps that starts at k, k + 1 when the
// step runs alone (or is inside a group that starts earlier: only group starts matter).
// A step joins the group before it when it is flat (EmitC::flat, or an elementwise
// expression), has the group's element count, and reads no value strided or whole that
// a step of the group writes, or whose buffer such a write may reuse.
std::vector<std::size_t> loop_group_ends(const ir::Graph& g, const Schedule& s);

}  // namespace mg::rt::c99
