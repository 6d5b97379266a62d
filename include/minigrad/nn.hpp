// The nn stack: modules with reflected parameters, layers, losses, optimizers and the
// one-graph training step. Separate from minigrad.hpp because Hana reflection is heavy.
#pragma once
#include <boost/hana/adapt_struct.hpp>
#include <boost/hana/define_struct.hpp>

#include "minigrad/dsl/nn/attention.hpp"
#include "minigrad/dsl/nn/batchnorm.hpp"
#include "minigrad/dsl/nn/checkpoint.hpp"
#include "minigrad/dsl/nn/conv.hpp"
#include "minigrad/dsl/nn/evaluator.hpp"
#include "minigrad/dsl/nn/layers.hpp"
#include "minigrad/dsl/nn/lora.hpp"
#include "minigrad/dsl/nn/loss.hpp"
#include "minigrad/dsl/nn/module.hpp"
#include "minigrad/dsl/nn/module_list.hpp"
#include "minigrad/dsl/nn/optim.hpp"
#include "minigrad/dsl/nn/parameter.hpp"
#include "minigrad/dsl/nn/train.hpp"
