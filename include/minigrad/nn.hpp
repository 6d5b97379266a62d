// The nn stack: modules with reflected parameters, layers, losses, optimizers and the
// one-graph training step. Separate from minigrad.hpp because Hana reflection is heavy.
#pragma once
#include <boost/hana/adapt_struct.hpp>
#include <boost/hana/define_struct.hpp>

#include "dsl/nn/batchnorm.hpp"
#include "dsl/nn/conv.hpp"
#include "dsl/nn/layers.hpp"
#include "dsl/nn/loss.hpp"
#include "dsl/nn/module.hpp"
#include "dsl/nn/optim.hpp"
#include "dsl/nn/parameter.hpp"
#include "dsl/nn/train.hpp"
