// Butcher tableaus of the explicit Runge-Kutta methods odeint offers, as plain numbers
// (no graph): the solver reads them, the tests check their order conditions.
#pragma once
#include <string>
#include <vector>

namespace mg::frontier::sutra {

enum class Method { euler, midpoint, rk4, dopri5, tsit5 };

struct Tableau {
  std::string name;
  int order = 1;                      // of the solution weights b
  std::vector<double> c;              // nodes, one per stage
  std::vector<std::vector<double>> a; // a[i][j], j < i (row i has i entries)
  std::vector<double> b;              // solution weights
  std::vector<double> e;              // b - b_hat (error weights); empty: fixed-step only
  bool fsal = false;                  // the last stage is f(t + h, y_new) (First Same As Last)
  // Dense output: y(t + theta h) = y + h * sum_i B_i(theta) k_i with
  // B_i(theta) = sum_p interp[i][p] theta^p (empty: no interpolant).
  std::vector<std::vector<double>> interp;
  bool adaptive() const { return !e.empty(); }
  int stages() const { return static_cast<int>(b.size()); }
};

const Tableau& tableau(Method m);
std::string to_string(Method m);

}  // namespace mg::frontier::sutra
