// hessian(y, x): moved to passes/jacobian.hpp (jacfwd of grad); this header stays for
// existing includes.
#pragma once
#include "minigrad/passes/jacobian.hpp"
