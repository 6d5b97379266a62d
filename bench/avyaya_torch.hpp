// libtorch reference for bench/avyaya_memory.cpp: the same coupling network's training
// step (ordinary autograd, SGD), median ms. In its own translation unit: torch headers are heavy.
#pragma once

namespace mg::bench {
double torch_coupling_step_ms(int depth, int batch, int half, int hidden, int threads, int warmup, int iters);
}
