// SPANDA: spiking neural networks on miniGrad (mg::frontier::spanda). LIF neurons with
// snnTorch's Leaky semantics and surrogate gradients, spiking Linear/Conv2D layers, BPTT
// through one scan, spike encoders and losses, and activity/energy counters.
#pragma once
#include "minigrad/frontier/spanda/counters.hpp"
#include "minigrad/frontier/spanda/encode.hpp"
#include "minigrad/frontier/spanda/layers.hpp"
#include "minigrad/frontier/spanda/leaky.hpp"
#include "minigrad/frontier/spanda/loss.hpp"
#include "minigrad/frontier/spanda/network.hpp"
#include "minigrad/frontier/spanda/surrogate.hpp"
