// Must NOT compile: a module struct adapts a std::string member. tests/nn/expect_compile_error.py
// checks the compiler says so in one static_assert, not pages of Hana instantiations.
#include <minigrad/nn.hpp>
struct Bad {
  mg::nn::Linear fc{2, 2};
  std::string label;
};
BOOST_HANA_ADAPT_STRUCT(Bad, fc, label);
int main() {
  Bad m;
  mg::Graph g;
  mg::nn::bind(m, g);
}
