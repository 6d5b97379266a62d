// PRAMANA (mg::frontier::pramana): mean + variance tensors propagated in one pass by the
// moments transformation; DistributionalLinear, GaussianNLLLoss, heteroscedastic heads.
#pragma once
#include "minigrad/frontier/pramana/distributional.hpp"
#include "minigrad/frontier/pramana/layers.hpp"
