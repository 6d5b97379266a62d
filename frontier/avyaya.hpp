// AVYAYA: reversible networks with O(1) activation memory in depth (frontier/avyaya/).
#pragma once
#include "minigrad/frontier/avyaya/coupling.hpp"
#include "minigrad/frontier/avyaya/reversible.hpp"
