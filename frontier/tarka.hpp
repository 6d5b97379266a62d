// TARKA: differentiable logic (LTN's fuzzy semantics) on miniGrad tensors. One include for
// connectives, quantifiers, Truth tensors with & | ~ >> ^, formulas as text, axioms and
// the semantic loss. Namespace mg::frontier::tarka.
#pragma once
#include "minigrad/frontier/tarka/axioms.hpp"
#include "minigrad/frontier/tarka/connectives.hpp"
#include "minigrad/frontier/tarka/formula.hpp"
#include "minigrad/frontier/tarka/grounding.hpp"
#include "minigrad/frontier/tarka/quantifiers.hpp"
#include "minigrad/frontier/tarka/truth.hpp"
