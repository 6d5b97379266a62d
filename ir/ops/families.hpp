// One register function per op family file; register_all_ops() calls each once.
#pragma once

namespace mg::ir {
void register_all_ops();
void register_unary_ops();     // ir/ops/unary.cpp
void register_binary_ops();    // ir/ops/binary.cpp (arithmetic, comparison, logic, where)
void register_reduce_ops();    // ir/ops/reduce.cpp (reductions, softmax family, argmax)
void register_shape_ops();     // ir/ops/shape.cpp
void register_linalg_ops();    // ir/ops/linalg.cpp (matmul)
void register_index_ops();     // ir/ops/index.cpp (gather, index_select, one_hot, cumsum)
void register_creation_ops();  // ir/ops/creation.cpp (full, arange, eye, random, cast)
void register_nn_ops();        // ir/ops/nn.cpp (conv2d and its adjoints)
void register_pool_ops();      // ir/ops/nn_pool.cpp (max/avg pooling and their adjoints)
void register_fused_ops();     // ir/ops/fused.cpp (fused: a region run as one loop)
void register_control_ops();   // ir/ops/control.cpp (scan: loops that stay loops)
void register_custom_vjp_ops();  // ir/ops/custom_vjp.cpp (an author-supplied backward)
void register_while_loop_ops();  // ir/ops/while_loop.cpp (bounded data-dependent loops)
void register_numerics_hints();  // ir/ops/numerics_hints.cpp (OpDef::numerics_hint of every family)
void register_flop_counts();     // ir/ops/flop_counts.cpp (OpDef::flops of every family)
void register_transform_rules();  // ir/ops/transforms.cpp (jvp and batch columns, after the entries)
void register_moment_rules();     // ir/ops/moment_rules.cpp (moments column; after the jvp column)
}  // namespace mg::ir
