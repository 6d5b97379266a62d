// The tableaus. dopri5: Dormand & Prince (1980), coefficients and the 4th-order dense
// output as torchdiffeq's dopri5 (a quartic through y0, y1, y_mid, f0, f1, rewritten here
// as polynomials in theta per stage). tsit5: Tsitouras (2011), its own continuous
// extension b_i(theta) (the 4th-order one of the paper).
#include "minigrad/frontier/sutra/tableau.hpp"

#include <stdexcept>

namespace mg::frontier::sutra {

namespace {

using Poly = std::vector<double>;  // coefficients in theta, lowest first

Poly mul(const Poly& p, const Poly& q) {
  Poly r(p.size() + q.size() - 1, 0.0);
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = 0; j < q.size(); ++j) r[i + j] += p[i] * q[j];
  return r;
}

Poly scale(Poly p, double s) {
  for (double& v : p) v *= s;
  return p;
}

Tableau make_euler() { return {"euler", 1, {0}, {{}}, {1}, {}, false, {}}; }

Tableau make_midpoint() { return {"midpoint", 2, {0, 0.5}, {{}, {0.5}}, {0, 1}, {}, false, {}}; }

Tableau make_rk4() {  // the classic one (torchdiffeq's "rk4" is the 3/8 rule)
  return {"rk4", 4, {0, 0.5, 0.5, 1}, {{}, {0.5}, {0, 0.5}, {0, 0, 1}}, {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6}, {}, false, {}};
}

Tableau make_dopri5() {
  Tableau t;
  t.name = "dopri5";
  t.order = 5;
  t.fsal = true;
  t.c = {0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1, 1};
  t.a = {{},
         {1.0 / 5},
         {3.0 / 40, 9.0 / 40},
         {44.0 / 45, -56.0 / 15, 32.0 / 9},
         {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
         {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
         {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}};
  t.b = {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84, 0};
  const std::vector<double> bhat = {5179.0 / 57600, 0, 7571.0 / 16695, 393.0 / 640, -92097.0 / 339200, 187.0 / 2100,
                                    1.0 / 40};
  for (int i = 0; i < 7; ++i) t.e.push_back(t.b[i] - bhat[i]);
  // torchdiffeq's y_mid = y0 + h * sum(cmid_i k_i) and the quartic through (y0, y1, y_mid,
  // f0 = k_1, f1 = k_7): with y1 - y0 = h sum b_i k_i every coefficient is h * (a
  // combination of the k_i), so B_i(theta) = d_i theta + c_i theta^2 + b_i theta^3 + a_i theta^4.
  const std::vector<double> cmid = {6025192743.0 / 30085553152 / 2, 0, 51252292925.0 / 65400821598 / 2,
                                    -2691868925.0 / 45128329728 / 2, 187940372067.0 / 1594534317056 / 2,
                                    -1776094331.0 / 19743644256 / 2, 11237099.0 / 235043384 / 2};
  for (int i = 0; i < 7; ++i) {
    const double f0 = i == 0, f1 = i == 6, y1 = t.b[i], ym = cmid[i];
    const double d = f0;
    const double c = (f1 - 4 * f0) - 5 * y1 + 16 * ym;
    const double b = (5 * f0 - 3 * f1) + 14 * y1 - 32 * ym;
    const double a = 2 * (f1 - f0) - 8 * y1 + 16 * ym;
    t.interp.push_back({0, d, c, b, a});
  }
  return t;
}

Tableau make_tsit5() {
  Tableau t;
  t.name = "tsit5";
  t.order = 5;
  t.fsal = true;
  t.c = {0, 0.161, 0.327, 0.9, 0.9800255409045097, 1, 1};
  t.a = {{},
         {0.161},
         {-0.008480655492356989, 0.335480655492357},
         {2.897153057105493, -6.359448489975075, 4.3622954328695815},
         {5.325864828439257, -11.748883564062828, 7.4955393428898365, -0.09249506636175525},
         {5.86145544294642, -12.92096931784711, 8.159367898576159, -0.071584973281401, -0.028269050394068383},
         {0.09646076681806523, 0.01, 0.4798896504144996, 1.379008574103742, -3.290069515436081, 2.324710524099774}};
  t.b = {0.09646076681806523, 0.01, 0.4798896504144996, 1.379008574103742, -3.290069515436081, 2.324710524099774, 0};
  t.e = {-0.00178001105222577714, -0.0008164344596567469, 0.007880878010261995, -0.1447110071732629,
         0.5823571654525552, -0.45808210592918697, 1.0 / 66};
  // b_i(theta), as printed in the paper in factored form.
  const Poly th = {0, 1}, th2 = {0, 0, 1};
  auto lin = [](double r) { return Poly{-r, 1}; };  // theta - r
  t.interp = {
      scale(mul(mul(th, lin(1.3299890189751412)), Poly{0.7139816917074209, -1.4364028541716351, 1}), -1.0530884977290216),
      scale(mul(th2, Poly{1.2949852507374631, -2.1966568338249754, 1}), 0.1017),
      scale(mul(th2, Poly{1.57803468208092486, -2.38535645472061657, 1}), 2.490627285651252793),
      scale(mul(mul(th2, lin(1.21712927295533244)), lin(0.61620406037800089)), -16.54810288924490272),
      scale(mul(mul(th2, lin(1.203071208372362603)), lin(0.658047292653547382)), 47.37952196281928122),
      scale(mul(mul(th2, lin(1.2)), lin(0.666666666666666667)), -34.87065786149660974),
      scale(mul(mul(th2, lin(1.0)), lin(0.6)), 2.5)};
  return t;
}

}  // namespace

const Tableau& tableau(Method m) {
  static const Tableau euler = make_euler(), midpoint = make_midpoint(), rk4 = make_rk4(), dopri5 = make_dopri5(),
                       tsit5 = make_tsit5();
  switch (m) {
    case Method::euler: return euler;
    case Method::midpoint: return midpoint;
    case Method::rk4: return rk4;
    case Method::dopri5: return dopri5;
    case Method::tsit5: return tsit5;
  }
  throw std::logic_error("sutra: unknown method");
}

std::string to_string(Method m) { return tableau(m).name; }

}  // namespace mg::frontier::sutra
