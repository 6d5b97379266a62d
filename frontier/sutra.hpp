// SUTRA: neural ODEs. odeint (euler, midpoint, rk4, dopri5, tsit5) with dense output,
// gradients by backprop through the solver or by the adjoint method, and NeuralODE.
#pragma once
#include "minigrad/frontier/sutra/neural_ode.hpp"
#include "minigrad/frontier/sutra/odeint.hpp"
#include "minigrad/frontier/sutra/tableau.hpp"
