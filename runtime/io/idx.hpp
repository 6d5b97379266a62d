// IDX files (the MNIST container: bytes 0 0 <type code> <ndim>, ndim big-endian u32
// dims, then big-endian data), plain or gzip-compressed, and the Fashion-MNIST loader.
// Invariants: a reader never allocates more than the file really decompresses to, and
// every malformed file is a UserError naming the file and the defect.
#pragma once
#include <string>

#include "minigrad/ir/array.hpp"

namespace mg::io {

// Reads the IDX file at `path` (gzip detected by its magic bytes, not the extension) into
// an Array of dtype `to` with the file's shape, each value multiplied by `scale`.
// Supported type codes: 0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32, 0x0D f32, 0x0E f64.
// `to` f32/f64 accepts every type code; `to` i64 accepts the integer codes with scale 1.
// UserError on: unreadable file, bad magic, unknown type code, ndim 0, truncated data,
// bytes after the data, a corrupt gzip stream, or an unsupported `to`.
Array read_idx(const std::string& path, DType to, double scale = 1.0);

struct FashionMnist {
  Array train_images;  // f32 [60000, 784], pixel / 255 in [0, 1], row-major 28x28 per row
  Array train_labels;  // i64 [60000], classes 0..9 (0 T-shirt/top ... 9 ankle boot)
  Array test_images;   // f32 [10000, 784]
  Array test_labels;   // i64 [10000]
};

// Loads {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] from `dir` (Debian package
// dataset-fashion-mnist installs the .gz files in the default directory). Images are
// flattened to [N, 784]; `images.reshaped({N, 1, 28, 28})` gives the NCHW view for
// convolutions without copying. UserError when a file is missing or inconsistent
// (images not 28x28, label count differs from image count, label outside 0..9).
FashionMnist load_fashion_mnist(const std::string& dir = "/usr/share/datasets/fashion-mnist");

}  // namespace mg::io
