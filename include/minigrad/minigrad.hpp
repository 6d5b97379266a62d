// The one header for users: the DSL (graphs, tensors, expressions, autodiff, compile)
// plus xtensor interop. Library code includes the narrower headers instead.
#pragma once
#include "dsl/autodiff.hpp"
#include "dsl/compile.hpp"
#include "dsl/expr.hpp"
#include "dsl/functions.hpp"
#include "dsl/graph.hpp"
#include "dsl/tensor.hpp"
#include "dsl/tensor_methods.hpp"
#include "ir/errors.hpp"
#include "ir/printer.hpp"
#include "minigrad/xtensor.hpp"
