// SafeTensors checkpoints in the Hugging Face format: an 8-byte little-endian header
// length N, N bytes of JSON {name: {dtype, shape, data_offsets: [begin, end]},
// "__metadata__": {string: string}} padded with spaces to a multiple of 8, then the data.
// Invariants: a save replaces the target atomically (temp file in the same directory,
// fsync, rename) so a failed or killed save leaves the previous file intact; a load
// either returns exactly what the header describes or throws UserError naming the file
// and the defect — it never allocates more than the file holds.
#pragma once
#include <map>
#include <string>

#include "minigrad/ir/array.hpp"

namespace mg::io {

struct SafeTensors {
  std::map<std::string, Array> tensors;         // dotted names: "features.0.weight"
  std::map<std::string, std::string> metadata;  // the optional "__metadata__" object
};

// Writes `tensors` (f32 -> F32, f64 -> F64, i64 -> I64, bool -> BOOL; 0-d and empty
// tensors allowed) and `metadata` (omitted from the header when empty) to `path`.
// Data is laid out by decreasing element size, then name, so every tensor is aligned to
// its element size within the 8-aligned data section. The name "__metadata__" and arrays
// without storage are UserErrors; so is any I/O failure (the old file is then untouched
// and the temp file removed).
void save_safetensors(const std::string& path, const std::map<std::string, Array>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads a SafeTensors file. F32/F64/I64/BOOL load as f32/f64/i64/bool. Other dtypes are
// widened losslessly: F16 and BF16 to f32; I8, I16, I32, U8, U16, U32 to i64; U64 to i64
// when every value fits (else UserError). F8 dtypes and unknown names are UserErrors
// naming the tensor and the dtype. Validation (each failure a UserError): header length
// within the file and at most 100 MB, JSON that parses, a top-level object without
// duplicate keys, exactly the keys dtype/shape/data_offsets per tensor, non-negative shape
// entries whose byte size does not overflow, end - begin == numel * itemsize, offsets
// tiling the data section exactly (from 0, contiguous, no overlap, no trailing bytes),
// string-valued metadata, and BOOL bytes that are 0 or 1.
SafeTensors load_safetensors(const std::string& path);

}  // namespace mg::io
