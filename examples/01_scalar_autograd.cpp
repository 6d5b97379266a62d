// Example 01: micrograd-style scalar autograd, symbolically.
// Builds f(a, b) = relu(a*b + b^3) + tanh(a) * exp(b) - log(a*a + 1) / b as IR, derives
// df/da, df/db and the second derivative d2f/da2 with the grad pass (grad of grad),
// runs everything in the interpreter and prints each value next to its hand derivation.
#include <cmath>
#include <cstdio>
#include <iostream>

#include <minigrad/minigrad.hpp>
#include "examples/main_guard.hpp"

int main() try {
  using namespace mg;
  Graph g;
  Tensor a = g.input("a", f64, {});
  Tensor b = g.input("b", f64, {});
  Tensor f = relu(a * b + pow(b, c<3>)) + tanh(a) * exp(b) - log(a * a + 1.0) / b;

  auto [da, db] = grad(f, {a, b});
  auto [dda] = grad(da, {a});  // grad of grad: da is ordinary IR

  Executable exe = compile(g, {f, da, db, dda});
  std::cout << "== IR (forward, then adjoint nodes marked `grad`)\n" << exe.ir_text() << "\n";

  const double A = 1.5, B = 0.75;
  auto out = exe.run({{"a", Array::scalar(f64, A)}, {"b", Array::scalar(f64, B)}});

  // Hand derivation (a*b + b^3 > 0 here, so relu is the identity).
  const double t = std::tanh(A), e = std::exp(B), q = A * A + 1;
  const double f_hand = A * B + B * B * B + t * e - std::log(q) / B;
  const double da_hand = B + (1 - t * t) * e - (2 * A / q) / B;
  const double db_hand = A + 3 * B * B + t * e + std::log(q) / (B * B);
  // d/da of da: -2 t (1 - t^2) e - (2 q - 4 A^2) / (q^2 B)
  const double dda_hand = -2 * t * (1 - t * t) * e - (2 * q - 4 * A * A) / (q * q * B);

  std::printf("%-10s %22s %22s %10s\n", "value", "miniGrad", "by hand", "abs diff");
  const char* names[] = {"f", "df/da", "df/db", "d2f/da2"};
  const double hand[] = {f_hand, da_hand, db_hand, dda_hand};
  bool ok = true;
  for (int i = 0; i < 4; ++i) {
    double v = out[i].at(0), d = std::fabs(v - hand[i]);
    ok = ok && d < 1e-12 * (1 + std::fabs(hand[i]));
    std::printf("%-10s %22.15f %22.15f %10.1e\n", names[i], v, hand[i], d);
  }
  std::printf("peak intermediate memory: %zu bytes over %zu steps\n", exe.peak_bytes(), exe.num_steps());
  return ok ? 0 : 1;
} MG_EXAMPLE_CATCH
