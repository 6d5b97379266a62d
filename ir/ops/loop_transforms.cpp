// jvp and batch columns of the loop ops (ir/ops/control.cpp: scan; custom_vjp.cpp;
// while_loop.cpp). Their rules are a follow-up: until then each entry says why it has none,
// and jvp / vmap over a graph holding one stop with an error naming the op and its line
// (never a fallback loop).
#include "minigrad/ir/ops/transforms.hpp"

namespace mg::ir::xf {

void register_loop_transforms() {
  OpDef& scan = defined_op("scan");
  scan.no_jvp_rule = "a scan carrying tangents through its body is not written yet (issue 15 follow-up)";
  scan.no_batch_rule = "batching a scan's body is not written yet (issue 15 follow-up)";
  OpDef& cv = defined_op("custom_vjp");
  cv.no_jvp_rule = "forward mode through an author-supplied backward is not written yet (issue 15 follow-up)";
  cv.no_batch_rule = "batching the forward and backward regions is not written yet (issue 15 follow-up)";
  defined_op("while_loop").no_batch_rule =
      "a batched data-dependent loop needs a per-example stop (masking) that is not written yet (issue 15 follow-up)";
}

}  // namespace mg::ir::xf
