// The one header for users: the DSL (graphs, tensors, expressions, autodiff, compile), the
// executables, file I/O (minigrad/io.hpp), the DP-SGD privacy accountant and xtensor interop
// (minigrad/xtensor.hpp). The nn
// stack is <minigrad/nn.hpp> (Hana reflection is heavy).
#pragma once
#include "minigrad/dsl/autodiff.hpp"
#include "minigrad/dsl/compile.hpp"
#include "minigrad/dsl/control.hpp"
#include "minigrad/dsl/custom_vjp.hpp"
#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/functions.hpp"
#include "minigrad/dsl/graph.hpp"
#include "minigrad/dsl/tensor.hpp"
#include "minigrad/dsl/tensor_methods.hpp"
#include "minigrad/dsl/visualize.hpp"
#include "minigrad/dsl/transforms.hpp"
#include "minigrad/dsl/moments.hpp"
#include "minigrad/io.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/runtime/glassbox/numerics.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "minigrad/runtime/privacy/rdp_accountant.hpp"
#include "minigrad/xtensor.hpp"
